package io.dataclay.client;

import com.google.protobuf.ByteString;
import io.dataclay.api.AliasInfo;
import io.dataclay.api.BackendInfo;
import io.dataclay.api.DatasetInfo;
import io.dataclay.api.StoredObject;
import io.dataclay.common.Language;
import io.dataclay.proto.AliasEntry;
import io.dataclay.proto.CopiesResponse;
import io.dataclay.proto.DatasetEntry;
import io.dataclay.proto.Field;
import io.dataclay.proto.NewVersionResponse;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.ObjectHeader;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.proto.SessionInfo;
import io.dataclay.serialization.EncodedField;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The answers of the client wrappers turned into plain records, IDs parsed, and the plain
 * records they send turned into messages, so that what uses the wrappers never sees a generated class.
 */
final class WireRecords {
  private WireRecords() {}

  /** An object's metadata; an empty master or version-of becomes null. */
  static StoredObject object(ObjectInfo o) {
    return new StoredObject(UUID.fromString(o.getId()), o.getClassName(), language(o.getLanguage()), o.getDataset(),
        optionalId(o.getMasterBackendId()), o.getReplicaBackendIdsList().stream().map(UUID::fromString).toList(),
        o.getAliasesList(), optionalId(o.getVersionOf()));
  }

  static DatasetInfo dataset(DatasetEntry d) {
    DatasetInfo.Access access = switch (d.getAccess()) {
      case DATASET_ACCESS_OWNER -> DatasetInfo.Access.OWNER;
      case DATASET_ACCESS_READ_WRITE -> DatasetInfo.Access.READ_WRITE;
      case DATASET_ACCESS_READ_ONLY -> DatasetInfo.Access.READ_ONLY;
      default -> DatasetInfo.Access.NONE;
    };
    return new DatasetInfo(d.getName(), d.getOwner(), access, d.getContractExpiresAtMs(), d.getObjects());
  }

  static AliasInfo alias(AliasEntry a) {
    return new AliasInfo(a.getAlias(), a.getDataset(), UUID.fromString(a.getObjectId()), a.getClassName(),
        language(a.getLanguage()), UUID.fromString(a.getMasterBackendId()));
  }

  static Copies copies(CopiesResponse r) {
    return new Copies(r.getObjectIdsList().stream().map(UUID::fromString).toList(), optionalId(r.getBackendId()),
        r.getBytesSent());
  }

  static NewVersion version(NewVersionResponse r) {
    return new NewVersion(object(r.getVersion()), r.getBytesSent());
  }

  /** A backend; languages the client does not know are left out. */
  static BackendInfo backend(io.dataclay.proto.BackendInfo b) {
    List<Language> languages = b.getLanguagesList().stream()
        .filter(l -> l == io.dataclay.proto.Language.JAVA || l == io.dataclay.proto.Language.PYTHON)
        .map(WireRecords::language).toList();
    return new BackendInfo(UUID.fromString(b.getId()), b.getName(), b.getHost(), b.getPort(), languages,
        b.getAlive());
  }

  static NewSession session(SessionInfo s) {
    return new NewSession(s.getToken(), s.getUsername(), s.getDataset(), s.getDatasetsList(),
        s.getReadOnlyDatasetsList(), s.getExpiresAtMs(), s.getAdmin());
  }

  static ObjectData objectData(NewObject o) {
    ObjectData.Builder d = ObjectData.newBuilder().setId(o.id().toString()).setHeader(ObjectHeader.newBuilder()
        .setClassName(o.className()).setLanguage(o.language() == Language.JAVA
            ? io.dataclay.proto.Language.JAVA : io.dataclay.proto.Language.PYTHON));
    for (Map.Entry<String, EncodedField> f : o.fields().entrySet()) {
      d.addFields(Field.newBuilder().setName(f.getKey()).setValue(ByteString.copyFrom(f.getValue().value()))
          .addAllReferences(f.getValue().references().stream().map(UUID::toString).toList()));
    }
    return d.build();
  }

  private static Language language(io.dataclay.proto.Language wire) {
    return wire == io.dataclay.proto.Language.JAVA ? Language.JAVA : Language.PYTHON;
  }

  private static UUID optionalId(String id) {
    return id.isEmpty() ? null : UUID.fromString(id);
  }
}
