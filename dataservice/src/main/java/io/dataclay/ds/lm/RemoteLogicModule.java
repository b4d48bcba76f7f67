package io.dataclay.ds.lm;

import io.dataclay.ds.service.LogicModuleGateway;
import io.dataclay.ds.service.Session;
import io.dataclay.ds.servicer.Messages;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.proto.ObjectInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** The Logic Module as the Data Service logic sees it, over the administrator session. */
public final class RemoteLogicModule implements LogicModuleGateway {
  private final AdminSession admin;
  private final String backendId;

  /** Registers objects as mastered by {@code backendId}. */
  public RemoteLogicModule(AdminSession admin, UUID backendId) {
    this.admin = admin;
    this.backendId = backendId.toString();
  }

  @Override
  public Session validateSession(String token) {
    return Messages.session(admin.client().validateSession(token), token);
  }

  @Override
  public void registerObjects(List<StoredObject> objects, String alias, UUID aliasObjectId) {
    List<ObjectInfo> infos = new ArrayList<>(objects.size());
    for (StoredObject o : objects) {
      ObjectHeader h = o.header();
      ObjectInfo.Builder info = ObjectInfo.newBuilder()
          .setId(o.id().toString())
          .setClassName(h.className())
          .setLanguage(Messages.language(h.language()))
          .setDataset(h.dataset())
          .setMasterBackendId(backendId);
      if (h.versionOf() != null) {
        info.setVersionOf(h.versionOf());
      }
      infos.add(info.build());
    }
    admin.client().registerObjects(infos, alias, alias == null ? null : aliasObjectId.toString());
  }
}
