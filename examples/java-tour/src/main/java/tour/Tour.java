package tour;

import io.dataclay.api.DataClay;
import io.dataclay.exceptions.AliasDoesNotExistException;
import tour.model.Counter;

/** Counts its own runs in a stored object: run it twice, from any machine that reaches the cluster. */
public class Tour {
  public static void main(String[] args) {
    DataClay.init(); // the same client.properties / DATACLAY_* settings as Python
    try {
      Counter visits;
      try {
        visits = Counter.getByAlias("visits");
      } catch (AliasDoesNotExistException e) {
        visits = new Counter();
        visits.makePersistent("visits"); // durable when it returns
      }
      System.out.println("run " + visits.increment() + ", counted on backend " + visits.getLocation());
    } finally {
      DataClay.finish();
    }
  }
}
