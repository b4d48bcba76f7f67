package io.dataclay.ds.session;

/**
 * Who says which session a client's token stands for: the Logic Module. The part of
 * {@link io.dataclay.ds.registration.LogicModuleGateway} that {@link SessionCache} needs, so that
 * sessions do not depend on object registration.
 */
public interface SessionAuthority {
  /**
   * The session behind a client's token.
   *
   * @throws io.dataclay.exceptions.NotAuthenticatedException when the token is unknown, closed or expired
   */
  Session validateSession(String token);
}
