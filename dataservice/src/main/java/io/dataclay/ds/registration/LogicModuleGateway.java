package io.dataclay.ds.registration;

import io.dataclay.ds.session.SessionAuthority;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.DataClayException;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * What the Data Service logic asks of the Logic Module, in plain types. Implemented over
 * {@link io.dataclay.client.LogicModuleClient} with the Data Service's backend session, and by the
 * {@link GroupCommitRegistrar} in front of it.
 */
public interface LogicModuleGateway extends SessionAuthority {
  /**
   * Registers groups of objects stored on this backend (master = this backend, dataset = each
   * header's), each all or nothing with its alias and independently of the others. One outcome per
   * group, in order: empty when registered (registering again alike from here changes nothing),
   * else why it was not, e.g. {@link io.dataclay.exceptions.ObjectAlreadyExistsException} naming an
   * ID registered by another backend or as another object, or
   * {@link io.dataclay.exceptions.AliasAlreadyExistsException}. Nothing of such a group is
   * registered; the caller removes what it stored.
   *
   * @throws io.dataclay.exceptions.BackendUnavailableException when the Logic Module did not answer
   *     (the groups may or may not be registered: sending them again is safe)
   */
  List<Optional<DataClayException>> registerGroups(List<RegistrationGroup> groups);

  /**
   * Registers {@code objects} as one group, with {@code alias} (when not null) given to {@code
   * aliasObjectId}; returns once the Logic Module accepted them.
   *
   * @throws DataClayException why not (see {@link #registerGroups}); nothing of them is registered
   */
  default void registerObjects(List<StoredObject> objects, String alias, UUID aliasObjectId) {
    Optional<DataClayException> refused =
        registerGroups(List.of(new RegistrationGroup(objects, alias, aliasObjectId))).get(0);
    if (refused.isPresent()) {
      throw refused.get();
    }
  }
}
