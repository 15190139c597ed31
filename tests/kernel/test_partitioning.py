"""The partition of a key is the one Kafka's producers choose: murmur2 as the Java client
computes it (the vectors of Kafka's own UtilsTest.testMurmur2), positive, modulo the count."""

import pytest

from kernel.partitioning import partition_of

JAVA_MURMUR2 = {"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536,
                "a-little-bit-longer-string": -1486304829, "abc": 479470107,
                "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971}


@pytest.mark.parametrize("key", sorted(JAVA_MURMUR2))
@pytest.mark.parametrize("partitions", [1, 4, 7, 12])
def test_the_partition_is_the_java_producers(key, partitions):
    # e.g. "21": -973932308 & 0x7FFFFFFF = 1173551340; % 4 = 0
    assert partition_of(key, partitions) == (JAVA_MURMUR2[key] & 0x7FFFFFFF) % partitions
    assert partition_of(key.encode(), partitions) == partition_of(key, partitions)
