package io.dataclay.ds.store.twolevel;

import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;

/**
 * What the 2lm engine knows about one stored object: its header, and when it is in the DRAM
 * cache its record and whether that record is newer than the one in NVRAM (dirty). Immutable but
 * for the CLOCK reference bit: a writer swaps in a new cell under the object's write lock.
 */
final class Cell {
  /** DRAM an object costs beyond its values: the record, its map and the cell (an estimate). */
  private static final long OBJECT_OVERHEAD = 160;
  private static final long FIELD_OVERHEAD = 96;

  final ObjectHeader header;
  /** The cached record (owned by the cache: its arrays are never handed out), or null when only in NVRAM. */
  final StoredObject cached;
  final boolean dirty;
  /** DRAM the cached record takes (0 when not cached). */
  final long bytes;
  /** Set on every use, cleared by the CLOCK hand: a referenced cell gets a second chance. */
  volatile boolean referenced = true;

  private Cell(ObjectHeader header, StoredObject cached, boolean dirty, long bytes) {
    this.header = header;
    this.cached = cached;
    this.dirty = dirty;
    this.bytes = bytes;
  }

  /** An object held only in NVRAM. */
  static Cell inNvram(ObjectHeader header) {
    return new Cell(header, null, false, 0);
  }

  /** A cached record, dirty when it is not yet written back. */
  static Cell cached(StoredObject object, boolean dirty) {
    return new Cell(object.header(), object, dirty, sizeOf(object));
  }

  /** This cell after its record was written back. */
  Cell cleaned() {
    Cell clean = new Cell(header, cached, false, bytes);
    clean.referenced = referenced;
    return clean;
  }

  /** This cell after its record left DRAM (written back first when dirty). */
  Cell evicted() {
    return inNvram(header);
  }

  /** DRAM a cached copy of {@code object} takes, estimated. */
  static long sizeOf(StoredObject object) {
    long total = OBJECT_OVERHEAD;
    for (FieldValue value : object.fields().values()) {
      total += FIELD_OVERHEAD + value.value().length + 16L * value.references().size();
    }
    return total;
  }
}
