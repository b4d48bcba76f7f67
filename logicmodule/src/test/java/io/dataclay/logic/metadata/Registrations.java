package io.dataclay.logic.metadata;

import java.util.List;

/** Registers one group at a time, as most metadata tests do. */
final class Registrations {
  private Registrations() {}

  /** Registers {@code objects} as one group with {@code alias} (null: none); throws the group's refusal. */
  static void register(MetadataStore store, List<ObjectRecord> objects, String alias, String aliasObjectId) {
    store.objects().register(List.of(new ObjectGroup(objects, alias, alias == null ? null : aliasObjectId)))
        .get(0).ifPresent(refused -> {
          throw refused;
        });
  }
}
