package io.dataclay.logic.servicer;

import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.ImportTables;
import io.dataclay.logic.metadata.MetadataCut;
import io.dataclay.logic.service.LogicModuleService;
import io.dataclay.logic.snapshot.ImportAllowance;
import io.dataclay.logic.snapshot.ImportCoordinator;
import io.dataclay.logic.snapshot.ImportOpening;
import io.dataclay.logic.snapshot.ImportPlan;
import io.dataclay.logic.snapshot.SnapshotCoordinator;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.BeginSnapshotRequest;
import io.dataclay.proto.DataContract;
import io.dataclay.proto.Empty;
import io.dataclay.proto.ImportAllowed;
import io.dataclay.proto.ImportOpened;
import io.dataclay.proto.ImportPlanPart;
import io.dataclay.proto.ImportReport;
import io.dataclay.proto.ImportRequest;
import io.dataclay.proto.ImportState;
import io.dataclay.proto.ImportStateResponse;
import io.dataclay.proto.ImportTarget;
import io.dataclay.proto.SnapshotAccount;
import io.dataclay.proto.SnapshotAlias;
import io.dataclay.proto.SnapshotBackend;
import io.dataclay.proto.SnapshotChunk;
import io.dataclay.proto.SnapshotDataset;
import io.dataclay.proto.SnapshotInfo;
import io.dataclay.proto.SnapshotRequest;
import io.dataclay.rpc.GrpcErrors;
import io.dataclay.rpc.RecordStreams;
import io.dataclay.rpc.ServerCalls;
import io.dataclay.rpc.SessionMetadata;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The gRPC side of snapshots and imports on the Logic Module (the RPCs LogicModuleServicer hands over). */
final class SnapshotServicer {
  private static final Empty EMPTY = Empty.getDefaultInstance();

  private final LogicModuleService service;

  SnapshotServicer(LogicModuleService service) {
    this.service = service;
  }

  void beginSnapshot(BeginSnapshotRequest r, StreamObserver<SnapshotInfo> out) {
    ServerCalls.respond(out, () -> {
      SnapshotCoordinator.Cut cut = service.beginSnapshot(token(), r.getDataset().isEmpty() ? null : r.getDataset(),
          r.getPasswordHashes());
      SnapshotInfo.Builder info = SnapshotInfo.newBuilder().setSnapshotId(cut.id()).setCutAtMs(cut.cutAtMs())
          .setBarrierMs(cut.barrierMs()).setVersion(LogicModuleService.VERSION);
      for (SnapshotCoordinator.Participant p : cut.backends()) {
        info.addBackends(SnapshotBackend.newBuilder().setBackend(backend(p.backend())).setObjects(p.objects())
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
    ServerCalls.respond(out, () -> {
      service.endSnapshot(token(), r.getSnapshotId());
      return EMPTY;
    });
  }

  StreamObserver<ImportPlanPart> beginImport(StreamObserver<ImportOpened> out) {
    String token = token();
    return new StreamObserver<>() {
      private ImportOpening opening;
      private boolean failed;

      @Override
      public void onNext(ImportPlanPart part) {
        if (failed) {
          return;
        }
        try {
          if (opening == null) {
            opening = service.beginImport(token);
          }
          switch (part.getPartCase()) {
            case PLAN -> opening.plan(plan(part.getPlan()));
            // the snapshot's owner, unlike RegisterModel's, where the caller is the owner
            case MODEL -> opening.model(ProtoMapping.toRecord(part.getModel())
                .withOwnerAndVersion(part.getModel().getOwner(), 0));
            case IDS -> opening.ids(part.getIds().getIdsList());
            case ALIASES -> opening.aliases(aliases(part.getAliases().getAliasesList()));
            default -> throw new InvalidArgumentException("part is empty");
          }
        } catch (RuntimeException e) {
          fail(e);
        }
      }

      @Override
      public void onError(Throwable t) {
        if (opening != null) {
          opening.abandon();
        }
      }

      @Override
      public void onCompleted() {
        if (failed) {
          return;
        }
        try {
          if (opening == null) {
            throw new InvalidArgumentException("parts: the stream held no plan");
          }
          ImportCoordinator.Opened opened = opening.open();
          out.onNext(ImportOpened.newBuilder().setImportId(opened.id()).addAllAccountsToCreate(opened.accountsToCreate())
              .addAllModelsToRegister(opened.modelsToRegister()).addAllExistingAccounts(opened.existingAccounts())
              .addAllExistingDatasets(opened.existingDatasets()).addAllNeeds(opened.needs()).build());
          out.onCompleted();
        } catch (RuntimeException e) {
          fail(e);
        }
      }

      private void fail(RuntimeException e) {
        failed = true;
        if (opening != null) {
          opening.abandon();
        }
        out.onError(GrpcErrors.toStatus(e));
      }
    };
  }

  void commitImport(ImportRequest r, StreamObserver<ImportReport> out) {
    ServerCalls.respond(out, () -> {
      ImportTables.Committed c = service.commitImport(token(), r.getImportId());
      return ImportReport.newBuilder().setObjects(c.objects()).setReplicas(c.replicas()).setAliases(c.aliases())
          .setDatasets(c.datasets()).setContracts(c.contracts()).addAllAccountsCreated(c.accountsCreated())
          .addAllModelsRegistered(c.models().stream().map(m -> m.namespace()).toList()).build();
    });
  }

  void abortImport(ImportRequest r, StreamObserver<Empty> out) {
    ServerCalls.respond(out, () -> {
      service.abortImport(token(), r.getImportId());
      return EMPTY;
    });
  }

  void getImportState(ImportRequest r, StreamObserver<ImportStateResponse> out) {
    ServerCalls.respond(out, () -> {
      ImportState state = switch (service.importState(token(), r.getImportId())) {
        case OPEN -> ImportState.IMPORT_OPEN;
        case COMMITTED -> ImportState.IMPORT_COMMITTED;
        case UNKNOWN -> ImportState.IMPORT_UNKNOWN;
      };
      return ImportStateResponse.newBuilder().setState(state).build();
    });
  }

  private static ImportPlan plan(io.dataclay.proto.ImportPlan p) {
    List<MetadataCut.Dataset> datasets = new ArrayList<>();
    Map<String, Long> datasetObjects = new HashMap<>();
    for (SnapshotDataset d : p.getDatasetsList()) {
      datasets.add(new MetadataCut.Dataset(d.getName(), d.getOwner()));
      if (datasetObjects.put(d.getName(), d.getObjects()) != null) {
        throw new InvalidArgumentException("plan.datasets: dataset '" + d.getName() + "' appears twice");
      }
    }
    List<ImportPlan.Account> accounts = new ArrayList<>();
    for (SnapshotAccount a : p.getAccountsList()) {
      accounts.add(new ImportPlan.Account(a.getUsername(), a.getAdmin(), a.getMayRegisterModels(), a.getPasswordHash(),
          a.getPasswordSalt(), a.getPasswordIterations(), a.getNewPassword()));
    }
    List<ContractRecord> contracts = new ArrayList<>();
    for (DataContract k : p.getContractsList()) {
      contracts.add(new ContractRecord(k.getDataset(), k.getOwner(), k.getBeneficiary(), k.getReadOnly(),
          k.getBeginsAtMs(), k.getExpiresAtMs()));
    }
    Map<String, ImportTables.Expected> targets = new HashMap<>();
    for (ImportTarget t : p.getTargetsList()) {
      if (targets.put(t.getBackendId(), new ImportTables.Expected(t.getObjects(), t.getReplicas())) != null) {
        throw new InvalidArgumentException("plan.targets: backend " + t.getBackendId() + " appears twice");
      }
    }
    return new ImportPlan(p.getSource(), datasets, datasetObjects, accounts, contracts, targets,
        allowed(p.getAllowed()), p.getDryRun());
  }

  private static Set<ImportAllowance> allowed(ImportAllowed a) {
    Set<ImportAllowance> out = EnumSet.noneOf(ImportAllowance.class);
    addIf(out, a.getAccounts(), ImportAllowance.ACCOUNTS);
    addIf(out, a.getAdmins(), ImportAllowance.ADMINS);
    addIf(out, a.getPasswordHashes(), ImportAllowance.PASSWORD_HASHES);
    addIf(out, a.getExistingAccounts(), ImportAllowance.EXISTING_ACCOUNTS);
    addIf(out, a.getContractsOnExistingDatasets(), ImportAllowance.CONTRACTS_ON_EXISTING_DATASETS);
    addIf(out, a.getObjectsInExistingDatasets(), ImportAllowance.OBJECTS_IN_EXISTING_DATASETS);
    addIf(out, a.getModels(), ImportAllowance.MODELS);
    return out;
  }

  private static void addIf(Set<ImportAllowance> set, boolean allowed, ImportAllowance allowance) {
    if (allowed) {
      set.add(allowance);
    }
  }

  private static List<MetadataCut.Alias> aliases(List<SnapshotAlias> list) {
    List<MetadataCut.Alias> out = new ArrayList<>(list.size());
    for (SnapshotAlias a : list) {
      out.add(new MetadataCut.Alias(a.getDataset(), a.getAlias(), a.getObjectId()));
    }
    return out;
  }

  static BackendInfo backend(BackendRecord b) {
    BackendInfo.Builder out = BackendInfo.newBuilder().setId(b.id()).setName(b.name()).setHost(b.host())
        .setPort(b.port()).setStoreEngine(b.storeEngine()).setAlive(true);
    b.languages().forEach(l -> out.addLanguages(ProtoMapping.toProto(l)));
    return out.build();
  }

  static SnapshotAccount account(AccountRecord a) {
    return SnapshotAccount.newBuilder().setUsername(a.username()).setAdmin(a.admin())
        .setMayRegisterModels(a.mayRegisterModels()).setPasswordHash(a.passwordHash()).setPasswordSalt(a.passwordSalt())
        .setPasswordIterations(a.passwordIterations()).build();
  }

  private static String token() {
    return SessionMetadata.currentToken();
  }
}
