package io.dataclay.enhance;

/** Marks a model class whose methods were enhanced to run in the backend when called on a proxy. */
public interface Enhanced {}
