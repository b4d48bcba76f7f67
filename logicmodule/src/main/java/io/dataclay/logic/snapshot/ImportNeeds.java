package io.dataclay.logic.snapshot;

import io.dataclay.exceptions.PermissionDeniedException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an import needs allowed, each with what in the plan needs it ("creates administrator
 * account 'x'"), and the refusal naming what was not allowed.
 */
final class ImportNeeds {
  private static final int EXAMPLES = 3;

  private final Map<ImportAllowance, List<String>> reasons = new EnumMap<>(ImportAllowance.class);

  /** Records that {@code what} (a phrase such as "creates account 'x'") needs {@code allowance}. */
  void add(ImportAllowance allowance, String what) {
    reasons.computeIfAbsent(allowance, a -> new ArrayList<>()).add(what);
  }

  /** The allowances needed, by their {@code --allow} names, in declaration order. */
  List<String> flags() {
    return reasons.keySet().stream().map(ImportAllowance::flag).toList();
  }

  /**
   * Throws unless {@code allowed} holds every allowance needed.
   *
   * @throws PermissionDeniedException naming each missing allowance, what needs it, and the flag to pass
   */
  void requireAllowed(Set<ImportAllowance> allowed) {
    List<String> missing = new ArrayList<>();
    List<String> why = new ArrayList<>();
    reasons.forEach((allowance, what) -> {
      if (!allowed.contains(allowance)) {
        missing.add(allowance.flag());
        String examples = String.join(", ", what.subList(0, Math.min(EXAMPLES, what.size())));
        why.add(allowance.flag() + " (it " + examples + (what.size() > EXAMPLES ? " and " + (what.size() - EXAMPLES)
            + " more" : "") + ")");
      }
    });
    if (!missing.isEmpty()) {
      throw new PermissionDeniedException("the import was refused: it needs what was not allowed: "
          + String.join("; ", why) + ". If you trust the snapshot with that, import it again with --allow "
          + String.join(",", missing) + " (--dry-run shows everything it would do)");
    }
  }
}
