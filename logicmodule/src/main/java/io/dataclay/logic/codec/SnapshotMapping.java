package io.dataclay.logic.codec;

import io.dataclay.common.Language;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.logic.metadata.AccountRecord;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ContractRecord;
import io.dataclay.logic.metadata.ImportTables;
import io.dataclay.logic.metadata.MetadataCut;
import io.dataclay.logic.snapshot.ImportAllowance;
import io.dataclay.logic.snapshot.ImportPlan;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.DataContract;
import io.dataclay.proto.ImportAllowed;
import io.dataclay.proto.ImportTarget;
import io.dataclay.proto.ObjectHeader;
import io.dataclay.proto.SnapshotAccount;
import io.dataclay.proto.SnapshotAlias;
import io.dataclay.proto.SnapshotDataset;
import io.dataclay.proto.StagedObject;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Snapshot and import messages to plain types and back, for the servicer (incoming snapshot and
 * import RPCs) and the outgoing calls to backends alike.
 */
public final class SnapshotMapping {
  private SnapshotMapping() {}

  /** The import plan a client sent, checked for datasets and targets named twice. */
  public static ImportPlan plan(io.dataclay.proto.ImportPlan p) {
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

  /** A batch of aliases an import sent. */
  public static List<MetadataCut.Alias> aliases(List<SnapshotAlias> list) {
    List<MetadataCut.Alias> out = new ArrayList<>(list.size());
    for (SnapshotAlias a : list) {
      out.add(new MetadataCut.Alias(a.getDataset(), a.getAlias(), a.getObjectId()));
    }
    return out;
  }

  /** A backend as a snapshot records it (always alive: it was when the cut was taken). */
  public static BackendInfo backend(BackendRecord b) {
    BackendInfo.Builder out = BackendInfo.newBuilder().setId(b.id()).setName(b.name()).setHost(b.host())
        .setPort(b.port()).setStoreEngine(b.storeEngine()).setAlive(true);
    b.languages().forEach(l -> out.addLanguages(ProtoMapping.toProto(l)));
    return out.build();
  }

  /** An account as a snapshot records it, with its password hash. */
  public static SnapshotAccount account(AccountRecord a) {
    return SnapshotAccount.newBuilder().setUsername(a.username()).setAdmin(a.admin())
        .setMayRegisterModels(a.mayRegisterModels()).setPasswordHash(a.passwordHash()).setPasswordSalt(a.passwordSalt())
        .setPasswordIterations(a.passwordIterations()).build();
  }

  /** A copy backend {@code b} staged for an import; it must name its language. */
  public static ImportTables.StagedCopy stagedCopy(BackendRecord b, StagedObject o) {
    ObjectHeader h = o.getHeader();
    Language language = switch (h.getLanguage()) {
      case PYTHON -> Language.PYTHON;
      case JAVA -> Language.JAVA;
      default -> throw new InvalidArgumentException("backend " + b.name() + " reported staged object " + o.getId()
          + " without a language");
    };
    return new ImportTables.StagedCopy(o.getId(), h.getMasterBackendId().isEmpty() ? null : h.getMasterBackendId(),
        h.getClassName(), language, h.getDataset(), h.getVersionOf().isEmpty() ? null : h.getVersionOf(),
        o.getReplicaBackendIdsList());
  }
}
