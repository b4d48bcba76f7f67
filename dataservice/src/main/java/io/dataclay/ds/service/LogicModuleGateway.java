package io.dataclay.ds.service;

import io.dataclay.ds.store.StoredObject;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * What the Data Service logic asks of the Logic Module, in plain types. Implemented over
 * {@link io.dataclay.client.LogicModuleClient} with the Data Service's administrator session.
 */
public interface LogicModuleGateway {
  /** How long a service waits in {@link #flush} before it gives up on the Logic Module. */
  Duration FLUSH_TIMEOUT = Duration.ofSeconds(5);

  /**
   * The session behind a client's token.
   *
   * @throws io.dataclay.exceptions.NotAuthenticatedException when the token is unknown, closed or expired
   */
  Session validateSession(String token);

  /**
   * Registers objects stored on this backend (master = this backend, dataset = each header's),
   * and gives {@code alias} (when not null) to {@code aliasObjectId}, in one Logic Module transaction.
   *
   * @throws io.dataclay.exceptions.AliasAlreadyExistsException when the alias is taken; nothing is registered
   */
  void registerObjects(List<StoredObject> objects, String alias, UUID aliasObjectId);

  /**
   * Returns once every registration handed to this gateway before the call has reached the Logic
   * Module. A gateway that registers synchronously has nothing to wait for.
   *
   * @throws io.dataclay.exceptions.BackendUnavailableException when that takes longer than {@code timeout}
   */
  default void flush(Duration timeout) {}
}
