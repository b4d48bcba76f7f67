package io.dataclay.client;

import java.util.List;

/**
 * One page of a listing: its entries and the token that asks for the next page ("" when the
 * listing is complete).
 */
public record Page<T>(List<T> items, String nextPageToken) {
  /** Freezes the entries. */
  public Page {
    items = List.copyOf(items);
  }
}
