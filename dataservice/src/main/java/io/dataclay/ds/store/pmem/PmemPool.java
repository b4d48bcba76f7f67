package io.dataclay.ds.store.pmem;

import com.intel.pmem.llpl.Heap;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.crypt.StoreKey;
import io.dataclay.ds.store.engine.PoolDirectory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Function;

/**
 * An open pmem pool of an engine: its claimed directory, the llpl heap in its pool file and the
 * slot directory at the heap's root. Opening it creates what is missing; closing it unmaps the
 * heap, then releases the directory.
 *
 * @param directory the claimed pool directory
 * @param file the pool file inside it
 * @param heap the llpl heap mapped from the file
 * @param slots the object directory at the heap's root
 */
public record PmemPool(PoolDirectory directory, Path file, Heap heap, SlotDirectory slots) {
  /**
   * Claims {@code config.path()} for {@code owner} with {@code key}, opens (or creates, of
   * {@code config.sizeBytes()}) the heap in {@code fileName} with a slot directory marked
   * {@code magic}, and hands the pool to {@code make}; when anything fails, what was opened is
   * closed again.
   *
   * @param engine the engine whose directory {@code magic} marks, named in errors
   * @throws io.dataclay.exceptions.InvalidArgumentException when the directory or pool file cannot be used
   */
  public static <S> S open(StoreConfig config, String owner, StoreKey key, String fileName, long magic, String engine,
      Function<PmemPool, S> make) {
    PoolDirectory directory = PoolDirectory.claim(config.path(), owner, key);
    Heap heap = null;
    try {
      Path file = directory.resolve(fileName);
      heap = Files.exists(file)
          ? PmemHeap.open(file)
          : PmemHeap.create(file, config.sizeBytes(), h -> SlotDirectory.create(h, magic));
      return make.apply(new PmemPool(directory, file, heap, SlotDirectory.open(heap, magic, file.toString(), engine)));
    } catch (RuntimeException e) {
      if (heap != null) {
        PmemHeap.close(heap);
      }
      directory.close();
      throw e;
    }
  }

  /** Unmaps the heap, then releases the directory; no call may be inside the pool any more. */
  public void close() {
    try {
      PmemHeap.close(heap);
    } finally {
      directory.close();
    }
  }
}
