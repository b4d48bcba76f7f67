package io.dataclay.logic.metadata;

/** How hard an embedded (SQLite) commit is pushed to disk before it returns. */
public enum MetadataSync {
  /** WAL with synchronous=NORMAL: a commit survives kill -9 of the process, not always a power loss. */
  NORMAL,
  /** WAL with synchronous=FULL: a commit also survives a power loss or OS crash; each commit fsyncs. */
  FULL
}
