package io.dataclay.ds.store.pmem;

import com.intel.pmem.llpl.AnyHeap;
import com.intel.pmem.llpl.Heap;
import com.intel.pmem.llpl.HeapException;
import com.intel.pmem.llpl.Transaction;
import com.intel.pmem.llpl.TransactionException;
import io.dataclay.common.PrivatePaths;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.StoreFullException;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Creates, opens and closes llpl heaps (PMDK object pools) with errors that say what is wrong, and
 * runs PMDK transactions, turning an allocation that does not fit into {@link StoreFullException}.
 */
public final class PmemHeap {
  /**
   * Smallest pool created: PMDK (minimum 8M) carves each allocation size class into runs of up
   * to about 1M per arena, so in a pool much below this a handful of distinct object sizes takes
   * every chunk and a 64K object no longer fits in an almost empty pool.
   */
  public static final long MINIMUM_BYTES = Math.max(32L << 20, AnyHeap.MINIMUM_HEAP_SIZE);

  private static final String CREATING_SUFFIX = ".creating";
  // llpl 1.2 keeps AnyHeap.close() package-private (heaps are meant to live as long as the JVM),
  // but a store that is closed must unmap and unlock its pool so that it can be reopened, by this
  // process or by the next owner. The method exists in every llpl 1.x; if a future llpl removes
  // it, this fails loudly at the first pmem store open instead of leaking pools silently.
  private static final Method CLOSE = closeMethod();

  private PmemHeap() {}

  /**
   * Creates a pool file of {@code sizeBytes}, lets {@code initialise} lay out its root, and only
   * then gives it its name: the pool is built under a temporary name, so a crash while creating
   * leaves no half-made pool behind under {@code file}. Returns the pool opened under its name.
   */
  public static Heap create(Path file, long sizeBytes, Consumer<Heap> initialise) {
    if (sizeBytes < MINIMUM_BYTES) {
      throw new InvalidArgumentException(
          "pool size " + sizeBytes + " bytes is below the minimum of " + MINIMUM_BYTES + " bytes ("
              + (MINIMUM_BYTES >> 20) + "M)");
    }
    Path temp = file.resolveSibling(file.getFileName() + CREATING_SUFFIX);
    try {
      Files.deleteIfExists(temp); // left by a crash during an earlier creation; never a pool yet
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot remove unfinished pool file " + temp + ": " + e.getMessage());
    }
    Heap heap;
    try {
      heap = Heap.createHeap(temp.toString(), sizeBytes);
    } catch (HeapException e) {
      throw new InvalidArgumentException(
          "cannot create a pool of " + sizeBytes + " bytes at " + temp + ": " + e.getMessage());
    }
    try {
      // PMDK makes the file with the mode llpl asks for (0600 in llpl 1.2) less the umask; made sure
      // of here, before the pool has its name: its directory is this user's alone (0700,
      // PoolDirectory), so nobody else can have opened the file in between
      PrivatePaths.restrict(temp);
      initialise.accept(heap);
    } finally {
      close(heap);
    }
    try {
      Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new InvalidArgumentException("cannot name the new pool " + file + ": " + e.getMessage());
    }
    return open(file);
  }

  /**
   * Opens an existing pool file; a file that is not an llpl heap is refused and left as it is.
   *
   * @throws InvalidArgumentException naming the file and PMDK's reason
   */
  public static Heap open(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new InvalidArgumentException("pool file " + file + " is missing or not a regular file");
    }
    try {
      return Heap.openHeap(file.toString());
    } catch (HeapException e) {
      throw new InvalidArgumentException("pool file " + file + " is not an llpl heap this engine can open ("
          + e.getMessage() + "); it was left untouched");
    }
  }

  /** Unmaps the pool; every block of it becomes unusable. */
  public static void close(Heap heap) {
    try {
      CLOSE.invoke(heap);
    } catch (InvocationTargetException e) {
      throw new InternalException("closing the pmem pool failed: " + e.getCause());
    } catch (IllegalAccessException e) {
      throw new InternalException("cannot close the pmem pool: " + e.getMessage());
    }
  }

  /**
   * Runs {@code body} as one PMDK transaction: all its transactional allocations, frees and logged
   * writes become durable together when it returns, or none of them when it throws (then also
   * after a crash: PMDK rolls an unfinished transaction back when the pool is next opened).
   *
   * @throws StoreFullException with {@code fullMessage} when an allocation did not fit
   */
  public static <T> T transaction(Heap heap, Supplier<T> body, Supplier<String> fullMessage) {
    try {
      return Transaction.create(heap, body);
    } catch (DataClayException e) {
      throw e;
    } catch (HeapException e) {
      if (e.getMessage() != null && e.getMessage().startsWith("Failed to allocate")) {
        throw new StoreFullException(fullMessage.get());
      }
      throw new InternalException("pmem transaction failed and was rolled back: " + e.getMessage());
    } catch (TransactionException e) {
      // llpl's only message for a failed pmemobj_tx_add_range; the usual cause is a pool too full
      // to extend the undo log of a large in-place write.
      if (e.getMessage() != null && e.getMessage().contains("failed to add to transaction")) {
        throw new StoreFullException(fullMessage.get() + " (no room for the undo log)");
      }
      throw new InternalException("pmem transaction failed and was rolled back: " + e.getMessage());
    } catch (IllegalStateException | IllegalArgumentException | IndexOutOfBoundsException e) {
      throw new InternalException("pmem transaction failed and was rolled back: " + e);
    }
  }

  private static Method closeMethod() {
    try {
      Method close = AnyHeap.class.getDeclaredMethod("close");
      close.setAccessible(true);
      return close;
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException("this llpl has no AnyHeap.close(); pmem stores cannot close their pools", e);
    }
  }
}
