package io.dataclay.ds.codec;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.dataclay.common.Language;
import io.dataclay.ds.environments.SequencedDelta;
import io.dataclay.ds.models.ModelBundle;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.FieldValue;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.ds.store.ObjectHeader;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.proto.ClassDescription;
import io.dataclay.proto.Field;
import io.dataclay.proto.Model;
import io.dataclay.proto.ModelFile;
import io.dataclay.proto.ObjectData;
import io.dataclay.proto.SessionInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Converts protocol messages to the Data Service's plain types and back, validating every field
 * on the way in: a bad field fails with INVALID_ARGUMENT naming it (e.g. "objects[2].header.class_name").
 * Shared by both directions: the servicer (incoming calls) and the outgoing adapters (execution
 * environment links, the Logic Module, other backends).
 */
public final class Messages {
  private Messages() {}

  /** A canonical lower-case UUID. */
  public static UUID uuid(String text, String field) {
    if (text.isEmpty()) {
      throw new InvalidArgumentException(field + " is empty: expected an object ID (a UUID)");
    }
    try {
      UUID id = UUID.fromString(text);
      if (id.toString().equals(text)) {
        return id;
      }
    } catch (IllegalArgumentException e) {
      // reported below
    }
    throw new InvalidArgumentException(field + " is not a canonical lower-case UUID: " + abbreviate(text));
  }

  /** A name that must be present (methods, fields, namespaces, classes). */
  public static String name(String text, String field) {
    if (text.isEmpty()) {
      throw new InvalidArgumentException(field + " is empty");
    }
    if (text.length() > 1024) {
      throw new InvalidArgumentException(field + " is longer than 1024 characters");
    }
    return text;
  }

  /** A language that must be PYTHON or JAVA. */
  public static Language language(io.dataclay.proto.Language language, String field) {
    switch (language) {
      case PYTHON: return Language.PYTHON;
      case JAVA: return Language.JAVA;
      default: throw new InvalidArgumentException(field + " must be PYTHON or JAVA, not " + language);
    }
  }

  /** The protocol form of a language. */
  public static io.dataclay.proto.Language language(Language language) {
    return language == Language.PYTHON ? io.dataclay.proto.Language.PYTHON : io.dataclay.proto.Language.JAVA;
  }

  /** A stored object from its protocol form; {@code header.dataset} is kept as sent ("" when unset). */
  public static StoredObject storedObject(ObjectData data, String field) {
    UUID id = uuid(data.getId(), field + ".id");
    if (!data.hasHeader()) {
      throw new InvalidArgumentException(field + ".header is missing");
    }
    io.dataclay.proto.ObjectHeader h = data.getHeader();
    ObjectHeader header = new ObjectHeader(
        name(h.getClassName(), field + ".header.class_name"),
        language(h.getLanguage(), field + ".header.language"),
        h.getDataset(),
        optionalUuid(h.getVersionOf(), field + ".header.version_of"),
        optionalUuid(h.getMasterBackendId(), field + ".header.master_backend_id"));
    return new StoredObject(id, header, fields(data.getFieldsList(), field + ".fields"));
  }

  /** Stored objects from their protocol form, refusing an ID that appears twice. */
  public static List<StoredObject> storedObjects(List<ObjectData> objects, String field) {
    List<StoredObject> out = new ArrayList<>(objects.size());
    Map<UUID, Integer> seen = new HashMap<>();
    for (int i = 0; i < objects.size(); i++) {
      StoredObject o = storedObject(objects.get(i), field + "[" + i + "]");
      Integer first = seen.putIfAbsent(o.id(), i);
      if (first != null) {
        throw new InvalidArgumentException(field + "[" + i + "].id repeats " + field + "[" + first + "].id (" + o.id() + ")");
      }
      out.add(o);
    }
    return out;
  }

  /** The protocol form of a stored object. */
  public static ObjectData objectData(StoredObject object) {
    ObjectHeader h = object.header();
    io.dataclay.proto.ObjectHeader.Builder header = io.dataclay.proto.ObjectHeader.newBuilder()
        .setClassName(h.className())
        .setLanguage(language(h.language()))
        .setDataset(h.dataset());
    if (h.versionOf() != null) {
      header.setVersionOf(h.versionOf());
    }
    if (h.masterBackendId() != null) {
      header.setMasterBackendId(h.masterBackendId());
    }
    ObjectData.Builder out = ObjectData.newBuilder().setId(object.id().toString()).setHeader(header);
    for (Map.Entry<String, FieldValue> f : object.fields().entrySet()) {
      out.addFields(field(f.getKey(), f.getValue()));
    }
    return out.build();
  }

  // Stored values are never written in place once read (a change makes a new array), so the
  // message shares the array instead of copying it: one copy less of every value sent.
  private static Field field(String name, FieldValue value) {
    Field.Builder fb = Field.newBuilder().setName(name).setValue(UnsafeByteOperations.unsafeWrap(value.value()));
    for (UUID ref : value.references()) {
      fb.addReferences(ref.toString());
    }
    return fb.build();
  }

  /** The protocol form of a delta (sequence 0: applied in the order sent). */
  public static io.dataclay.proto.ObjectDelta objectDelta(ObjectDelta delta) {
    io.dataclay.proto.ObjectDelta.Builder out = io.dataclay.proto.ObjectDelta.newBuilder().setId(delta.id().toString());
    for (Map.Entry<String, FieldValue> f : delta.changed().entrySet()) {
      out.addChangedFields(field(f.getKey(), f.getValue()));
    }
    out.addAllRemovedFields(delta.removed());
    return out.build();
  }

  /** The protocol form of an object's whole new state (see ObjectDelta.whole_state). */
  public static io.dataclay.proto.ObjectDelta wholeState(ObjectDelta state) {
    return objectDelta(state).toBuilder().setWholeState(true).build();
  }

  /** A delta with its sequence; whole states are refused (see {@link #wholeStateOf}). */
  public static SequencedDelta delta(io.dataclay.proto.ObjectDelta delta, String field) {
    if (delta.getWholeState()) {
      throw new InvalidArgumentException(field + ".whole_state is only for ApplyDeltas between backends");
    }
    return parsed(delta, field);
  }

  /** The new state carried by a delta marked whole_state (as a delta with no removed fields yet). */
  public static ObjectDelta wholeStateOf(io.dataclay.proto.ObjectDelta delta, String field) {
    if (delta.getRemovedFieldsCount() > 0) {
      throw new InvalidArgumentException(field + " is a whole state: it lists no removed_fields");
    }
    return parsed(delta, field).delta();
  }

  private static SequencedDelta parsed(io.dataclay.proto.ObjectDelta delta, String field) {
    UUID id = uuid(delta.getId(), field + ".id");
    Map<String, FieldValue> changed = fields(delta.getChangedFieldsList(), field + ".changed_fields");
    Set<String> removed = new HashSet<>();
    for (int i = 0; i < delta.getRemovedFieldsCount(); i++) {
      String n = name(delta.getRemovedFields(i), field + ".removed_fields[" + i + "]");
      if (changed.containsKey(n) || !removed.add(n)) {
        throw new InvalidArgumentException(field + ".removed_fields[" + i + "] (" + n + ") is changed or removed twice");
      }
    }
    return new SequencedDelta(new ObjectDelta(id, changed, removed), delta.getSequence());
  }

  /**
   * A model as the service installs it, with its owner and publication (file paths are checked
   * where they are written); a withdrawn model carries no files.
   */
  public static ModelBundle bundle(Model model, String field) {
    String namespace = name(model.getNamespace(), field + ".namespace");
    Language language = language(model.getLanguage(), field + ".language");
    String owner = name(model.getOwner(), field + ".owner");
    if (model.getVersion() < 0 || model.getRevision() < 0) {
      throw new InvalidArgumentException(field + ".version and .revision are never negative (" + model.getVersion()
          + ", " + model.getRevision() + ")");
    }
    if (model.getWithdrawn() && model.getFilesCount() > 0) {
      throw new InvalidArgumentException(field + ".files: a withdrawn model carries no files, not "
          + model.getFilesCount());
    }
    List<ModelBundle.ModelFile> files = new ArrayList<>(model.getFilesCount());
    for (int i = 0; i < model.getFilesCount(); i++) {
      ModelFile f = model.getFiles(i);
      files.add(new ModelBundle.ModelFile(f.getPath(), f.getContent().toByteArray()));
    }
    List<String> classes = new ArrayList<>(model.getClassesCount());
    for (int i = 0; i < model.getClassesCount(); i++) {
      classes.add(name(model.getClasses(i).getName(), field + ".classes[" + i + "].name"));
    }
    return new ModelBundle(namespace, language, model.getVersion(), files, classes, owner, model.getPublished(),
        model.getWithdrawn(), model.getRevision());
  }

  /** The protocol form of an installed model: namespace, version, files, class names, owner and publication. */
  public static Model model(ModelBundle bundle) {
    Model.Builder out = Model.newBuilder()
        .setNamespace(bundle.namespace())
        .setLanguage(language(bundle.language()))
        .setVersion(bundle.version())
        .setOwner(bundle.owner())
        .setPublished(bundle.published())
        .setWithdrawn(bundle.withdrawn())
        .setRevision(bundle.revision());
    for (ModelBundle.ModelFile f : bundle.files()) {
      out.addFiles(ModelFile.newBuilder().setPath(f.path()).setContent(ByteString.copyFrom(f.content())));
    }
    for (String c : bundle.classNames()) {
      out.addClasses(ClassDescription.newBuilder().setName(c));
    }
    return out.build();
  }

  /** A session from what the Logic Module answered; {@code token} is the one that was validated. */
  public static Session session(SessionInfo info, String token) {
    return new Session(token, info.getUsername(), info.getDataset(), Set.copyOf(info.getDatasetsList()),
        Set.copyOf(info.getReadOnlyDatasetsList()), info.getExpiresAtMs(), info.getAdmin(), info.getBackend(),
        info.getAccessChangesAtMs(), info.getBackend() ? info.getBackendId() : "");
  }

  /** The protocol form of a session, token included (execution environments act as the caller). */
  public static SessionInfo sessionInfo(Session session) {
    return SessionInfo.newBuilder()
        .setToken(session.token())
        .setUsername(session.username())
        .setDataset(session.dataset())
        .addAllDatasets(session.datasets())
        .addAllReadOnlyDatasets(session.readOnlyDatasets())
        .setExpiresAtMs(session.expiresAtMs())
        .setAdmin(session.admin())
        .setBackend(session.backend())
        .build();
  }

  private static Map<String, FieldValue> fields(List<Field> fields, String field) {
    Map<String, FieldValue> out = new LinkedHashMap<>();
    for (int i = 0; i < fields.size(); i++) {
      Field f = fields.get(i);
      String at = field + "[" + i + "]";
      String n = name(f.getName(), at + ".name");
      List<UUID> refs = new ArrayList<>(f.getReferencesCount());
      for (int r = 0; r < f.getReferencesCount(); r++) {
        refs.add(uuid(f.getReferences(r), at + ".references[" + r + "]"));
      }
      if (out.put(n, new FieldValue(f.getValue().toByteArray(), refs)) != null) {
        throw new InvalidArgumentException(at + ".name repeats field " + n);
      }
    }
    return out;
  }

  private static String optionalUuid(String text, String field) {
    return text.isEmpty() ? null : uuid(text, field).toString();
  }

  private static String abbreviate(String text) {
    return text.length() <= 64 ? "'" + text + "'" : "'" + text.substring(0, 64) + "...'";
  }
}
