package io.dataclay.api;

import io.dataclay.common.Language;
import java.util.UUID;

/**
 * An alias as listed by {@link DataClay#listAliases(String)}, with the object it names.
 *
 * @param className Python "module.Class" or a Java binary name
 * @param backendId the backend holding the object's master copy
 */
public record AliasInfo(String alias, String dataset, UUID objectId, String className, Language language,
    UUID backendId) {}
