"""Kafka's default partitioner, which every shell reading or writing keyed topics must agree
with: the workers' tables and the docket sink read a vehicle's partition without asking."""

from __future__ import annotations

from kafka.partitioner.default import murmur2


def partition_of(key: str | bytes, partitions: int) -> int:
    """The partition Kafka's default (murmur2) partitioner gives a key (kafka-python and Java alike)."""
    return (murmur2(key if isinstance(key, bytes) else key.encode()) & 0x7FFFFFFF) % partitions
