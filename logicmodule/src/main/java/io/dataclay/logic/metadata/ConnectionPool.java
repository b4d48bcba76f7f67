package io.dataclay.logic.metadata;

import io.dataclay.exceptions.InternalException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fixed-size set of open connections lent one caller at a time. With size 1 (SQLite) it is a
 * single connection serialised by a lock. Broken connections are dropped and reopened on demand.
 */
final class ConnectionPool implements AutoCloseable {
  /** Opens one new connection. */
  interface Opener {
    Connection open() throws SQLException;
  }

  private static final long WAIT_SECONDS = 30;

  private final Opener opener;
  private final int size;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition returned = lock.newCondition();
  private final Deque<PooledConnection> idle = new ArrayDeque<>();
  private int open;
  private boolean closed;

  ConnectionPool(Opener opener, int size) {
    this.opener = opener;
    this.size = size;
  }

  /** A connection for the caller's exclusive use until {@link #release}; waits up to 30 s. */
  PooledConnection acquire() throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    lock.lock();
    try {
      while (true) {
        if (closed) {
          throw new InternalException("the metadata store is closed");
        }
        PooledConnection c = idle.pollFirst();
        if (c != null) {
          return c;
        }
        if (open < size) {
          open++;
          break;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new InternalException("no metadata database connection became free within " + WAIT_SECONDS + " s");
        }
        returned.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InternalException("interrupted while waiting for a metadata database connection");
    } finally {
      lock.unlock();
    }
    try {
      return new PooledConnection(opener.open());
    } catch (SQLException | RuntimeException e) {
      forget();
      throw e;
    }
  }

  /** Gives a connection back; a broken one is closed and will be replaced by a fresh one. */
  void release(PooledConnection c, boolean broken) {
    if (broken) {
      c.close();
      forget();
      return;
    }
    lock.lock();
    try {
      if (closed) {
        c.close();
        open--;
        return;
      }
      idle.addFirst(c);
      returned.signal();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      for (PooledConnection c : idle) {
        c.close();
        open--;
      }
      idle.clear();
      returned.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void forget() {
    lock.lock();
    try {
      open--;
      returned.signal();
    } finally {
      lock.unlock();
    }
  }
}
