package io.dataclay.logic.servicer;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.logic.codec.MetadataRecords;
import io.dataclay.logic.codec.ProtoMapping;
import io.dataclay.logic.codec.SnapshotMapping;
import io.dataclay.logic.metadata.ImportTables;
import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.logic.snapshot.ImportCoordinator;
import io.dataclay.logic.snapshot.ImportOpening;
import io.dataclay.logic.snapshot.SnapshotCoordinator;
import io.dataclay.proto.BeginSnapshotRequest;
import io.dataclay.proto.Empty;
import io.dataclay.proto.ImportOpened;
import io.dataclay.proto.ImportPlanPart;
import io.dataclay.proto.ImportReport;
import io.dataclay.proto.ImportRequest;
import io.dataclay.proto.ImportState;
import io.dataclay.proto.ImportStateResponse;
import io.dataclay.proto.SnapshotBackend;
import io.dataclay.proto.SnapshotChunk;
import io.dataclay.proto.SnapshotInfo;
import io.dataclay.proto.SnapshotRequest;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.server.RecordStreams;
import io.dataclay.server.Replies;
import io.dataclay.server.UploadStream;
import io.dataclay.rpc.SessionMetadata;
import io.grpc.stub.StreamObserver;

/** The gRPC side of snapshots and imports on the Logic Module (the RPCs LogicModuleServicer hands over). */
final class SnapshotServicer {
  private static final Empty EMPTY = Empty.getDefaultInstance();

  private final LogicModuleService service;

  SnapshotServicer(LogicModuleService service) {
    this.service = service;
  }

  void beginSnapshot(BeginSnapshotRequest r, StreamObserver<SnapshotInfo> out) {
    Replies.now(out, () -> {
      SnapshotCoordinator.Cut cut = service.beginSnapshot(token(), r.getDataset().isEmpty() ? null : r.getDataset(),
          r.getPasswordHashes());
      SnapshotInfo.Builder info = SnapshotInfo.newBuilder().setSnapshotId(cut.id()).setCutAtMs(cut.cutAtMs())
          .setBarrierMs(cut.barrierMs()).setVersion(LogicModuleService.VERSION);
      for (SnapshotCoordinator.Participant p : cut.backends()) {
        info.addBackends(SnapshotBackend.newBuilder().setBackend(SnapshotMapping.backend(p.backend())).setObjects(p.objects())
            .setBytes(p.bytes()));
      }
      return info.build();
    });
  }

  void exportMetadata(SnapshotRequest r, StreamObserver<SnapshotChunk> out) {
    SnapshotCoordinator.MetadataView view;
    try {
      view = service.snapshotMetadata(token(), r.getSnapshotId());
    } catch (RuntimeException e) {
      out.onError(GrpcErrors.toStatus(e));
      return;
    }
    RecordStreams.send(out, RecordStreams.chunks(new MetadataRecords(view, () -> service.snapshots().touch(
        view.cut().id()))), () -> service.snapshots().metadataDone(view));
  }

  void endSnapshot(SnapshotRequest r, StreamObserver<Empty> out) {
    Replies.now(out, () -> {
      service.endSnapshot(token(), r.getSnapshotId());
      return EMPTY;
    });
  }

  StreamObserver<ImportPlanPart> beginImport(StreamObserver<ImportOpened> out) {
    String token = token();
    return new UploadStream<>(out) {
      private ImportOpening opening;

      @Override
      protected void take(ImportPlanPart part) {
        if (opening == null) {
          opening = service.beginImport(token);
        }
        switch (part.getPartCase()) {
          case PLAN -> opening.plan(SnapshotMapping.plan(part.getPlan()));
          // the snapshot's owner, unlike RegisterModel's, where the caller is the owner
          case MODEL -> opening.model(ProtoMapping.toRecord(part.getModel())
              .withOwnerAndVersion(part.getModel().getOwner(), 0));
          case IDS -> opening.ids(part.getIds().getIdsList());
          case ALIASES -> opening.aliases(SnapshotMapping.aliases(part.getAliases().getAliasesList()));
          default -> throw new InvalidArgumentException("part is empty");
        }
      }

      @Override
      protected ImportOpened answer() {
        if (opening == null) {
          throw new InvalidArgumentException("parts: the stream held no plan");
        }
        ImportCoordinator.Opened opened = opening.open();
        return ImportOpened.newBuilder().setImportId(opened.id()).addAllAccountsToCreate(opened.accountsToCreate())
            .addAllModelsToRegister(opened.modelsToRegister()).addAllExistingAccounts(opened.existingAccounts())
            .addAllExistingDatasets(opened.existingDatasets()).addAllNeeds(opened.needs()).build();
      }

      @Override
      protected void abandon() {
        if (opening != null) {
          opening.abandon();
        }
      }
    };
  }

  void commitImport(ImportRequest r, StreamObserver<ImportReport> out) {
    Replies.now(out, () -> {
      ImportTables.Committed c = service.commitImport(token(), r.getImportId());
      return ImportReport.newBuilder().setObjects(c.objects()).setReplicas(c.replicas()).setAliases(c.aliases())
          .setDatasets(c.datasets()).setContracts(c.contracts()).addAllAccountsCreated(c.accountsCreated())
          .addAllModelsRegistered(c.models().stream().map(m -> m.namespace()).toList()).build();
    });
  }

  void abortImport(ImportRequest r, StreamObserver<Empty> out) {
    Replies.now(out, () -> {
      service.abortImport(token(), r.getImportId());
      return EMPTY;
    });
  }

  void getImportState(ImportRequest r, StreamObserver<ImportStateResponse> out) {
    Replies.now(out, () -> {
      ImportState state = switch (service.importState(token(), r.getImportId())) {
        case OPEN -> ImportState.IMPORT_OPEN;
        case COMMITTED -> ImportState.IMPORT_COMMITTED;
        case UNKNOWN -> ImportState.IMPORT_UNKNOWN;
      };
      return ImportStateResponse.newBuilder().setState(state).build();
    });
  }

  private static String token() {
    return SessionMetadata.currentToken();
  }
}
