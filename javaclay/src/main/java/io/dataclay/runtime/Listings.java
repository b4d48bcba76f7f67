package io.dataclay.runtime;

import io.dataclay.api.AliasInfo;
import io.dataclay.api.DatasetInfo;
import io.dataclay.api.StoredObject;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.Language;
import io.dataclay.proto.AliasEntry;
import io.dataclay.proto.DatasetEntry;
import io.dataclay.proto.ListAliasesRequest;
import io.dataclay.proto.ListDatasetsRequest;
import io.dataclay.proto.ListObjectsRequest;
import io.dataclay.proto.ObjectInfo;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Listings of what is stored as lazy streams: the Logic Module is asked for a page only when the
 * stream has used up the one before (see the ListDatasets, ListAliases and ListObjects RPCs).
 */
final class Listings {
  private Listings() {}

  /** One page: its entries and the token of the next ("": none). */
  private record Page<T>(List<T> items, String next) {}

  static Stream<DatasetInfo> datasets(LogicModuleClient lm, boolean countObjects) {
    return stream(token -> {
      var page = lm.listDatasets(ListDatasetsRequest.newBuilder().setCountObjects(countObjects)
          .setPageToken(token).build());
      return new Page<>(page.getDatasetsList().stream().map(Listings::dataset).toList(), page.getNextPageToken());
    });
  }

  static Stream<AliasInfo> aliases(LogicModuleClient lm, String pattern, String dataset) {
    return stream(token -> {
      var page = lm.listAliases(ListAliasesRequest.newBuilder().setPattern(nullToEmpty(pattern))
          .setDataset(nullToEmpty(dataset)).setPageToken(token).build());
      return new Page<>(page.getAliasesList().stream().map(Listings::alias).toList(), page.getNextPageToken());
    });
  }

  static Stream<StoredObject> objects(LogicModuleClient lm, String className, String dataset) {
    return stream(token -> {
      var page = lm.listObjects(ListObjectsRequest.newBuilder().setClassName(nullToEmpty(className))
          .setDataset(nullToEmpty(dataset)).setPageToken(token).build());
      return new Page<>(page.getObjectsList().stream().map(Listings::object).toList(), page.getNextPageToken());
    });
  }

  private static DatasetInfo dataset(DatasetEntry d) {
    DatasetInfo.Access access = switch (d.getAccess()) {
      case DATASET_ACCESS_OWNER -> DatasetInfo.Access.OWNER;
      case DATASET_ACCESS_READ_WRITE -> DatasetInfo.Access.READ_WRITE;
      case DATASET_ACCESS_READ_ONLY -> DatasetInfo.Access.READ_ONLY;
      default -> DatasetInfo.Access.NONE;
    };
    return new DatasetInfo(d.getName(), d.getOwner(), access, d.getContractExpiresAtMs(), d.getObjects());
  }

  private static AliasInfo alias(AliasEntry a) {
    return new AliasInfo(a.getAlias(), a.getDataset(), UUID.fromString(a.getObjectId()), a.getClassName(),
        language(a.getLanguage()), UUID.fromString(a.getMasterBackendId()));
  }

  private static StoredObject object(ObjectInfo o) {
    return new StoredObject(UUID.fromString(o.getId()), o.getClassName(), language(o.getLanguage()), o.getDataset(),
        UUID.fromString(o.getMasterBackendId()), o.getReplicaBackendIdsList().stream().map(UUID::fromString).toList(),
        o.getAliasesList(), o.getVersionOf().isEmpty() ? null : UUID.fromString(o.getVersionOf()));
  }

  private static Language language(io.dataclay.proto.Language wire) {
    return wire == io.dataclay.proto.Language.JAVA ? Language.JAVA : Language.PYTHON;
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
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
          next = page.next();
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
