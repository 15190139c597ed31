"""The tests' docket stores: opened as the application opens them, with an audit key
(every writer needs one) fixed for the test run."""

from __future__ import annotations

from dockets.audit import AuditKey, verify_record
from dockets.db import open_store

TEST_AUDIT_KEY = AuditKey(bytes(range(32)))


def open_test_store(url: str, **kwargs):
    return open_store(url, audit_key=kwargs.pop("audit_key", TEST_AUDIT_KEY), **kwargs)


def verified_entries(session, anchors=()) -> int:
    """The number of audit entries, once the whole record verifies (AuditError if not)."""
    return verify_record(session, {TEST_AUDIT_KEY.key_id: TEST_AUDIT_KEY}, list(anchors)).entries
