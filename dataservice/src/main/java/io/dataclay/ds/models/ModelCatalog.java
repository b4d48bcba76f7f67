package io.dataclay.ds.models;

import java.util.List;

/**
 * Every model the Logic Module has registered (a withdrawn one without files), and the last model
 * change the list includes: a model this backend knows that is missing from it, and is not newer
 * than that change, was removed.
 */
public record ModelCatalog(List<ModelBundle> models, long revision) {
  /** Freezes the list. */
  public ModelCatalog {
    models = List.copyOf(models);
  }

  /** The models whose code may run (not withdrawn). */
  public List<ModelBundle> loadable() {
    return models.stream().filter(m -> !m.withdrawn()).toList();
  }
}
