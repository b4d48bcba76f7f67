package io.dataclay.ds.lm;

import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.registration.LogicModuleGateway;
import io.dataclay.ds.registration.ObjectDirectory;
import io.dataclay.ds.registration.ObjectLocation;
import io.dataclay.ds.registration.RegistrationGroup;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.ErrorCode;
import io.dataclay.proto.ErrorInfo;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.rpc.GrpcErrors;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** The Logic Module as the Data Service logic sees it, over this backend's own session. */
public final class RemoteLogicModule implements LogicModuleGateway, ObjectDirectory {
  private final BackendSession admin;
  private final String backendId;

  /** Registers objects as mastered by {@code backendId}. */
  public RemoteLogicModule(BackendSession admin, UUID backendId) {
    this.admin = admin;
    this.backendId = backendId.toString();
  }

  @Override
  public Session validateSession(String token) {
    return Messages.session(admin.client().validateSession(token), token);
  }

  @Override
  public List<Optional<DataClayException>> registerGroups(List<RegistrationGroup> groups) {
    List<io.dataclay.proto.RegistrationGroup> wire = new ArrayList<>(groups.size());
    for (RegistrationGroup g : groups) {
      io.dataclay.proto.RegistrationGroup.Builder group = io.dataclay.proto.RegistrationGroup.newBuilder()
          .addAllObjects(infos(g.objects(), backendId));
      if (g.alias() != null) {
        group.setAlias(g.alias()).setAliasObjectId(g.aliasObjectId().toString());
      }
      wire.add(group.build());
    }
    List<ErrorInfo> outcomes = admin.client().registerGroups(wire);
    if (outcomes.size() != groups.size()) {
      throw new InternalException("the Logic Module answered " + outcomes.size() + " outcomes for " + groups.size()
          + " registration groups");
    }
    List<Optional<DataClayException>> out = new ArrayList<>(outcomes.size());
    for (ErrorInfo outcome : outcomes) {
      out.add(outcome.getCode() == ErrorCode.ERROR_UNSPECIFIED ? Optional.empty()
          : Optional.of(GrpcErrors.fromInfo(outcome)));
    }
    return out;
  }

  @Override
  public ObjectLocation locate(UUID id) {
    return location(admin.client().getObjectInfo(id.toString()));
  }

  @Override
  public List<String> liveBackends() {
    return admin.client().getBackends().stream().filter(BackendInfo::getAlive).map(BackendInfo::getId).toList();
  }

  @Override
  public void registerOn(List<StoredObject> objects, String masterBackendId) {
    admin.client().registerObjects(infos(objects, masterBackendId), null, null);
  }

  @Override
  public void addReplicas(List<UUID> ids, String backend) {
    admin.client().addReplicas(texts(ids), backend);
  }

  @Override
  public void removeReplicas(List<UUID> ids, String backend) {
    admin.client().removeReplicas(texts(ids), backend);
  }

  @Override
  public void setMaster(List<UUID> ids, String backend) {
    admin.client().setMaster(texts(ids), backend);
  }

  @Override
  public void unregister(List<UUID> ids) {
    admin.client().unregisterObjects(texts(ids));
  }

  @Override
  public List<ObjectLocation> replicatedFrom(String backend) {
    return admin.client().getReplicatedObjects(backend).stream().map(RemoteLogicModule::location).toList();
  }

  private static ObjectLocation location(io.dataclay.api.StoredObject info) {
    return new ObjectLocation(info.id(), text(info.backendId()), texts(info.replicaBackendIds()),
        info.versionOf() == null ? null : info.versionOf().toString(),
        new ObjectHeader(info.className(), info.language(), info.dataset(), null, null));
  }

  private static String text(UUID id) {
    return id == null ? "" : id.toString();
  }

  private static List<String> texts(List<UUID> ids) {
    return ids.stream().map(UUID::toString).toList();
  }

  private static List<ObjectInfo> infos(List<StoredObject> objects, String master) {
    List<ObjectInfo> infos = new ArrayList<>(objects.size());
    for (StoredObject o : objects) {
      ObjectHeader h = o.header();
      ObjectInfo.Builder info = ObjectInfo.newBuilder()
          .setId(o.id().toString())
          .setClassName(h.className())
          .setLanguage(Messages.language(h.language()))
          .setDataset(h.dataset())
          .setMasterBackendId(master);
      if (h.versionOf() != null) {
        info.setVersionOf(h.versionOf());
      }
      infos.add(info.build());
    }
    return infos;
  }
}
