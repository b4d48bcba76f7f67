package io.dataclay.logic.codec;

import com.google.protobuf.ByteString;
import io.dataclay.common.Language;
import io.dataclay.logic.accounts.CallerSession;
import io.dataclay.logic.backends.RegisteredBackend;
import io.dataclay.logic.checks.Checks;
import io.dataclay.logic.events.ClusterEvent;
import io.dataclay.logic.listing.Listing;
import io.dataclay.logic.metadata.BackendRecord;
import io.dataclay.logic.metadata.ListingStore;
import io.dataclay.logic.metadata.ModelRecord;
import io.dataclay.logic.metadata.ObjectGroup;
import io.dataclay.logic.metadata.ObjectRecord;
import io.dataclay.proto.AliasEntry;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.ClassDescription;
import io.dataclay.proto.DatasetAccess;
import io.dataclay.proto.DatasetEntry;
import io.dataclay.proto.FieldDescription;
import io.dataclay.proto.MethodDescription;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelFile;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.proto.RegistrationGroup;
import io.dataclay.proto.SessionInfo;
import java.util.ArrayList;
import java.util.List;

/**
 * Converts between protocol messages and the Logic Module's plain types. Wire-only problems
 * (unknown or unspecified enum values) are refused here; every other rule lives in the service.
 */
public final class ProtoMapping {
  private ProtoMapping() {}

  /** A required language: unspecified or unknown values are INVALID_ARGUMENT naming {@code field}. */
  public static Language language(String field, io.dataclay.proto.Language wire) {
    switch (wire) {
      case PYTHON: return Language.PYTHON;
      case JAVA: return Language.JAVA;
      default:
        throw Checks.invalid(field, "must be PYTHON or JAVA; got " + wire);
    }
  }

  /** An optional language filter: unspecified means all (null); unknown values are refused. */
  public static Language languageFilter(String field, io.dataclay.proto.Language wire) {
    return wire == io.dataclay.proto.Language.LANGUAGE_UNSPECIFIED ? null : language(field, wire);
  }

  /** The wire form of a language. */
  public static io.dataclay.proto.Language toProto(Language language) {
    return language == Language.PYTHON ? io.dataclay.proto.Language.PYTHON : io.dataclay.proto.Language.JAVA;
  }

  /** The wire form of a session. */
  public static SessionInfo toProto(CallerSession s) {
    return SessionInfo.newBuilder().setToken(s.token()).setUsername(s.username()).setDataset(s.dataset())
        .addAllDatasets(s.datasets()).setExpiresAtMs(s.expiresAtMs()).setAdmin(s.admin()).setBackend(s.backend())
        .addAllReadOnlyDatasets(new java.util.TreeSet<>(s.readOnlyDatasets()))
        .setAccessChangesAtMs(s.accessChangesAtMs()).setBackendId(s.backendId() == null ? "" : s.backendId()).build();
  }

  /** The wire form of a data contract. */
  public static io.dataclay.proto.DataContract toProto(io.dataclay.logic.metadata.ContractRecord c) {
    return io.dataclay.proto.DataContract.newBuilder().setDataset(c.dataset()).setOwner(c.owner())
        .setBeneficiary(c.beneficiary()).setReadOnly(c.readOnly()).setBeginsAtMs(c.beginsAtMs())
        .setExpiresAtMs(c.expiresAtMs()).build();
  }

  /**
   * A model as sent by a client (its owner, version and revision are ignored; RegisterModel decides
   * whether it is published, an import keeps the snapshot's word).
   */
  public static ModelRecord toRecord(Model m) {
    List<ModelRecord.File> files = new ArrayList<>(m.getFilesCount());
    for (ModelFile f : m.getFilesList()) {
      files.add(new ModelRecord.File(f.getPath(), f.getContent().toByteArray()));
    }
    List<ModelRecord.ClassInfo> classes = new ArrayList<>(m.getClassesCount());
    for (ClassDescription c : m.getClassesList()) {
      List<ModelRecord.Member> fields = new ArrayList<>(c.getFieldsCount());
      for (FieldDescription f : c.getFieldsList()) {
        fields.add(new ModelRecord.Member(f.getName(), f.getType()));
      }
      List<ModelRecord.Member> methods = new ArrayList<>(c.getMethodsCount());
      for (MethodDescription d : c.getMethodsList()) {
        methods.add(new ModelRecord.Member(d.getName(), d.getSignature()));
      }
      classes.add(new ModelRecord.ClassInfo(c.getName(), fields, methods));
    }
    return new ModelRecord(m.getNamespace(), language("language", m.getLanguage()), "", 0, files, classes)
        .withPublished(m.getPublished());
  }

  /** The wire form of a stored model. */
  public static Model toProto(ModelRecord m) {
    Model.Builder b = Model.newBuilder().setNamespace(m.namespace()).setLanguage(toProto(m.language()))
        .setOwner(m.owner()).setVersion(m.version()).setPublished(m.published()).setWithdrawn(m.withdrawn())
        .setRevision(m.revision());
    for (ModelRecord.File f : m.files()) {
      b.addFiles(ModelFile.newBuilder().setPath(f.path()).setContent(ByteString.copyFrom(f.content())));
    }
    for (ModelRecord.ClassInfo c : m.classes()) {
      ClassDescription.Builder cb = ClassDescription.newBuilder().setName(c.name());
      for (ModelRecord.Member f : c.fields()) {
        cb.addFields(FieldDescription.newBuilder().setName(f.name()).setType(f.detail()));
      }
      for (ModelRecord.Member d : c.methods()) {
        cb.addMethods(MethodDescription.newBuilder().setName(d.name()).setSignature(d.detail()));
      }
      b.addClasses(cb);
    }
    return b.build();
  }

  /** A backend as it registers ({@code alive} is the Logic Module's to say, so it is ignored). */
  public static BackendRecord toRecord(BackendInfo b) {
    List<Language> languages = new ArrayList<>(b.getLanguagesCount());
    for (int i = 0; i < b.getLanguagesCount(); i++) {
      languages.add(language("languages[" + i + "]", b.getLanguages(i)));
    }
    return new BackendRecord(b.getId(), b.getName(), b.getHost(), b.getPort(), languages, b.getStoreEngine());
  }

  /** The wire form of a registered backend with its liveness. */
  public static BackendInfo toProto(RegisteredBackend r) {
    BackendRecord b = r.backend();
    BackendInfo.Builder out = BackendInfo.newBuilder().setId(b.id()).setName(b.name()).setHost(b.host())
        .setPort(b.port()).setStoreEngine(b.storeEngine()).setAlive(r.alive());
    for (Language l : b.languages()) {
      out.addLanguages(toProto(l));
    }
    return out.build();
  }

  /** An object as a backend registers it; {@code at} prefixes field names in errors ("objects[3]."). */
  public static ObjectRecord toRecord(ObjectInfo o, String at) {
    return new ObjectRecord(o.getId(), o.getClassName(), language(at + "language", o.getLanguage()), o.getDataset(),
        o.getMasterBackendId(), o.getReplicaBackendIdsList(), o.getAliasesList(), o.getVersionOf());
  }

  /** A registration group read from the wire ({@code at}: its field path, for messages); an empty alias is none. */
  public static ObjectGroup toGroup(RegistrationGroup g, String at) {
    List<ObjectRecord> objects = new ArrayList<>(g.getObjectsCount());
    for (int i = 0; i < g.getObjectsCount(); i++) {
      objects.add(toRecord(g.getObjects(i), at + "objects[" + i + "]."));
    }
    boolean named = !g.getAlias().isEmpty();
    return new ObjectGroup(objects, named ? g.getAlias() : null,
        named || !g.getAliasObjectId().isEmpty() ? g.getAliasObjectId() : null);
  }

  /** The wire form of a listed dataset. */
  public static DatasetEntry toProto(Listing.Dataset d) {
    DatasetAccess access = switch (d.access()) {
      case OWNER -> DatasetAccess.DATASET_ACCESS_OWNER;
      case READ_WRITE -> DatasetAccess.DATASET_ACCESS_READ_WRITE;
      case READ_ONLY -> DatasetAccess.DATASET_ACCESS_READ_ONLY;
      case NONE -> DatasetAccess.DATASET_ACCESS_NONE;
    };
    return DatasetEntry.newBuilder().setName(d.name()).setOwner(d.owner()).setAccess(access)
        .setContractExpiresAtMs(d.contractExpiresAtMs()).setObjects(d.objects()).build();
  }

  /** The wire form of a listed alias. */
  public static AliasEntry toProto(ListingStore.AliasRow a) {
    return AliasEntry.newBuilder().setAlias(a.alias()).setDataset(a.dataset()).setObjectId(a.objectId())
        .setClassName(a.className()).setLanguage(toProto(a.language())).setMasterBackendId(a.masterBackendId())
        .build();
  }

  /** The wire form of an object's metadata. */
  public static ObjectInfo toProto(ObjectRecord o) {
    return ObjectInfo.newBuilder().setId(o.id()).setClassName(o.className()).setLanguage(toProto(o.language()))
        .setDataset(o.dataset()).setMasterBackendId(o.masterBackendId())
        .addAllReplicaBackendIds(o.replicaBackendIds()).addAllAliases(o.aliases()).setVersionOf(o.versionOf())
        .build();
  }

  /** The wire form of a cluster event. */
  public static io.dataclay.proto.ClusterEvent toProto(ClusterEvent e) {
    return io.dataclay.proto.ClusterEvent.newBuilder().setAtMs(e.atMs()).setKind(e.kind()).setBackendId(e.backendId())
        .setObjects(e.objects()).setTerm(e.term()).setDetail(e.detail()).build();
  }
}
