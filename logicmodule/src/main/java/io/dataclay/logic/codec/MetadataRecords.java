package io.dataclay.logic.codec;

import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.MetadataCut;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.snapshot.SnapshotCoordinator;
import io.dataclay.proto.MetadataRecord;
import io.dataclay.proto.SnapshotAlias;
import io.dataclay.proto.SnapshotAliases;
import io.dataclay.proto.SnapshotDataset;
import io.dataclay.proto.SnapshotObject;
import io.dataclay.proto.SnapshotObjects;
import io.dataclay.proto.SnapshotSource;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A snapshot's metadata as MetadataRecords (snapshot.proto), in the order the format fixes: the
 * source, models, accounts, datasets, contracts, then objects and aliases in batches, each batch
 * read from the metadata's view only when it is taken.
 */
public final class MetadataRecords implements Iterator<MetadataRecord> {
  private static final int BATCH = 1000;

  private final SnapshotCoordinator.MetadataView view;
  private final Runnable progress;
  private final ArrayDeque<MetadataRecord> small = new ArrayDeque<>();
  private Iterator<MetadataCut.ObjectCopies> objects;
  private Iterator<MetadataCut.Alias> aliases;

  /** Records of {@code view}, read as they are taken; {@code progress} runs at each batch read. */
  public MetadataRecords(SnapshotCoordinator.MetadataView view, Runnable progress) {
    this.view = view;
    this.progress = progress;
    SnapshotCoordinator.Cut cut = view.cut();
    SnapshotSource.Builder source = SnapshotSource.newBuilder().setSnapshotId(cut.id()).setCutAtMs(cut.cutAtMs())
        .setDataset(view.dataset() == null ? "" : view.dataset())
        .setVersion(io.dataclay.logic.service.LogicModuleService.VERSION).setPasswordHashes(view.passwordHashes());
    cut.backends().forEach(p -> source.addBackends(SnapshotMapping.backend(p.backend())));
    small.add(MetadataRecord.newBuilder().setSource(source).build());
    MetadataCut m = view.metadata();
    for (ModelRecord model : m.models()) {
      small.add(MetadataRecord.newBuilder().setModel(ProtoMapping.toProto(model)).build());
    }
    for (AccountRecord a : m.accounts(view.dataset(), view.passwordHashes())) {
      small.add(MetadataRecord.newBuilder().setAccount(SnapshotMapping.account(a)).build());
    }
    for (MetadataCut.Dataset d : m.datasets(view.dataset())) {
      small.add(MetadataRecord.newBuilder().setDataset(SnapshotDataset.newBuilder().setName(d.name())
          .setOwner(d.owner())).build());
    }
    for (ContractRecord k : m.contracts(view.dataset())) {
      small.add(MetadataRecord.newBuilder().setContract(ProtoMapping.toProto(k)).build());
    }
  }

  @Override
  public boolean hasNext() {
    if (!small.isEmpty()) {
      return true;
    }
    if (objects == null) {
      objects = view.metadata().objects(view.dataset());
    }
    if (objects.hasNext()) {
      return true;
    }
    if (aliases == null) {
      aliases = view.metadata().aliases(view.dataset());
    }
    return aliases.hasNext();
  }

  @Override
  public MetadataRecord next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    if (!small.isEmpty()) {
      return small.poll();
    }
    progress.run();
    if (objects.hasNext()) {
      SnapshotObjects.Builder batch = SnapshotObjects.newBuilder();
      for (int i = 0; i < BATCH && objects.hasNext(); i++) {
        MetadataCut.ObjectCopies o = objects.next();
        batch.addObjects(SnapshotObject.newBuilder().setId(o.id()).setMasterBackendId(o.master())
            .addAllReplicaBackendIds(o.replicas()));
      }
      return MetadataRecord.newBuilder().setObjects(batch).build();
    }
    SnapshotAliases.Builder batch = SnapshotAliases.newBuilder();
    for (int i = 0; i < BATCH && aliases.hasNext(); i++) {
      MetadataCut.Alias a = aliases.next();
      batch.addAliases(SnapshotAlias.newBuilder().setDataset(a.dataset()).setAlias(a.alias()).setObjectId(a.objectId()));
    }
    return MetadataRecord.newBuilder().setAliases(batch).build();
  }
}
