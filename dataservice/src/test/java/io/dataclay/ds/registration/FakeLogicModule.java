package io.dataclay.ds.registration;

import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.ObjectAlreadyExistsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** Records requests; holds the first until released; refuses listed IDs; can be down, or broken. */
final class FakeLogicModule implements LogicModuleGateway {
  final List<List<RegistrationGroup>> requests = new CopyOnWriteArrayList<>();
  final Set<UUID> refused = ConcurrentHashMap.newKeySet();
  final AtomicInteger unavailable = new AtomicInteger();
  final AtomicReference<Error> broken = new AtomicReference<>();
  final CountDownLatch arrived = new CountDownLatch(1);
  final CountDownLatch release = new CountDownLatch(1);

  @Override
  public Session validateSession(String token) {
    throw new UnsupportedOperationException();
  }

  @Override
  public List<Optional<DataClayException>> registerGroups(List<RegistrationGroup> groups) {
    requests.add(groups);
    arrived.countDown();
    try {
      release.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (broken.get() != null) {
      throw broken.get();
    }
    if (unavailable.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new BackendUnavailableException("the Logic Module is down");
    }
    List<Optional<DataClayException>> outcomes = new ArrayList<>();
    for (RegistrationGroup g : groups) {
      Optional<UUID> taken = g.objects().stream().map(StoredObject::id).filter(refused::contains).findFirst();
      outcomes.add(taken.map(id -> (DataClayException) new ObjectAlreadyExistsException("object " + id
          + " is already registered")));
    }
    return outcomes;
  }
}
