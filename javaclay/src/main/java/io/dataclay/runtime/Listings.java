package io.dataclay.runtime;

import io.dataclay.api.AliasInfo;
import io.dataclay.api.DatasetInfo;
import io.dataclay.api.StoredObject;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.client.Page;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Listings of what is stored as lazy streams: the Logic Module is asked for a page only when the
 * stream has used up the one before (see the ListDatasets, ListAliases and ListObjects RPCs).
 */
final class Listings {
  private Listings() {}

  static Stream<DatasetInfo> datasets(LogicModuleClient lm, boolean countObjects) {
    return stream(token -> lm.listDatasets(countObjects, 0, token));
  }

  static Stream<AliasInfo> aliases(LogicModuleClient lm, String pattern, String dataset) {
    return stream(token -> lm.listAliases(pattern, dataset, 0, token));
  }

  static Stream<StoredObject> objects(LogicModuleClient lm, String className, String dataset) {
    return stream(token -> lm.listObjects(className, dataset, 0, token));
  }

  private static <T> Stream<T> stream(Function<String, Page<T>> fetch) {
    Iterator<T> pages = new Iterator<>() {
      private final ArrayDeque<T> buffered = new ArrayDeque<>();
      private String next = "";
      private boolean started;

      @Override
      public boolean hasNext() {
        while (buffered.isEmpty() && (!started || !next.isEmpty())) {
          Page<T> page = fetch.apply(next);
          started = true;
          buffered.addAll(page.items());
          next = page.nextPageToken();
        }
        return !buffered.isEmpty();
      }

      @Override
      public T next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return buffered.removeFirst();
      }
    };
    return StreamSupport.stream(Spliterators.spliteratorUnknownSize(pages, Spliterator.ORDERED | Spliterator.NONNULL),
        false);
  }
}
