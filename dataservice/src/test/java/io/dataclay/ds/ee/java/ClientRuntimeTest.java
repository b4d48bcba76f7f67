package io.dataclay.ds.ee.java;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.Runtimes;
import io.dataclay.common.Language;
import io.dataclay.ds.TestCluster;
import io.dataclay.ds.ee.java.models.Account;
import io.dataclay.ds.ee.java.models.Frozen;
import io.dataclay.ds.ee.java.models.Ledger;
import io.dataclay.ds.ee.java.models.Overdrawn;
import io.dataclay.enhance.Enhanced;
import io.dataclay.exceptions.AliasAlreadyExistsException;
import io.dataclay.exceptions.AliasDoesNotExistException;
import io.dataclay.exceptions.ObjectNotPersistentException;
import io.dataclay.exceptions.RemoteException;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.runtime.ClientConfig;
import io.dataclay.runtime.ClientRuntime;
import io.dataclay.serialization.AllowList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Java client API against a real Logic Module and Data Service, with enhanced model classes. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientRuntimeTest {
  @RegisterExtension final TestCluster cluster = TestCluster.forEachTestWithDataService();
  private ClientRuntime client;
  private Class<? extends DataClayObject> accountClass;

  @BeforeEach
  void start() throws Exception {
    cluster.registerModel(JavaModels.model("bank", Account.class, Overdrawn.class, Frozen.class));
    cluster.session("ann");
    // the client runs Account enhanced, as a real build leaves it; the Data Service's model loader enhances it
    ClassLoader enhancing = new ModelClassLoader("bank",
        Map.of(Account.class.getName(), JavaModels.classFile(Account.class)), ClientRuntimeTest.class.getClassLoader());
    accountClass = enhancing.loadClass(Account.class.getName()).asSubclass(DataClayObject.class);
    client = connect("ann");
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
  }

  private ClientRuntime connect(String user) {
    String authority = cluster.lmChannel().authority();
    int port = Integer.parseInt(authority.substring(authority.lastIndexOf(':') + 1));
    return new ClientRuntime(new ClientConfig("127.0.0.1", port, user, TestCluster.password(user), "", AllowList.none(),
        TlsSettings.plaintext()),
        accountClass.getClassLoader());
  }

  private Ledger account(String owner) throws Exception {
    return (Ledger) accountClass.getConstructor(String.class).newInstance(owner);
  }

  private <T> T as(ClientRuntime runtime, Supplier<T> work) {
    return Runtimes.runWith(runtime, work);
  }

  /** Runs {@code work} with {@link #client} as this thread's runtime. */
  private void inClient(Runnable work) {
    as(client, () -> {
      work.run();
      return null;
    });
  }

  @Test
  void model_classes_are_enhanced_and_run_locally_while_volatile() throws Exception {
    // setup
    Ledger a = account("ann");
    // run
    long balance = a.deposit(5);
    // verify
    assertTrue(a instanceof Enhanced);
    assertEquals(5, balance);
    assertNull(((DataClayObject) a).getObjectId());
    assertThrows(ObjectNotPersistentException.class, () -> ((DataClayObject) a).getLocation());
  }

  @Test
  void a_persistent_object_runs_its_methods_in_the_backend_and_another_runtime_finds_it_by_alias() throws Exception {
    // setup
    Ledger a = account("ann");
    a.deposit(10);
    // run
    as(client, () -> {
      ((DataClayObject) a).makePersistent("ann-account");
      return a.deposit(5);
    });
    ClientRuntime second = connect("ann");
    Ledger found;
    long seen;
    Object byClass;
    try {
      found = (Ledger) as(second, () -> DataClayObject.getByAlias(accountClass, "ann-account"));
      seen = as(second, found::getBalance);
      // the build plugin gave the model class its own static getByAlias(alias)
      byClass = as(second, () -> {
        try {
          return accountClass.getDeclaredMethod("getByAlias", String.class).invoke(null, "ann-account");
        } catch (ReflectiveOperationException e) {
          throw new AssertionError("the enhanced model class has no static getByAlias(String)", e);
        }
      });
    } finally {
      second.close();
    }
    // verify
    assertEquals(15, seen);
    assertEquals(((DataClayObject) a).getObjectId(), ((DataClayObject) found).getObjectId());
    assertEquals(((DataClayObject) a).getID(), ((DataClayObject) byClass).getID());
    assertTrue(accountClass.isInstance(byClass));
    assertEquals(cluster.node().identity().id(), as(client, ((DataClayObject) a)::getLocation));
    assertEquals(List.of(cluster.node().identity().id()), as(client, ((DataClayObject) a)::getAllLocations));
  }

  @Test
  void a_remote_exception_reaches_the_caller_with_its_type_and_message() throws Exception {
    // setup
    Ledger a = account("ann");
    inClient(() -> ((DataClayObject) a).makePersistent());
    // run
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> inClient(() -> a.withdraw(3)));
    // verify
    assertEquals("balance 0 is less than 3", e.getMessage());
  }

  @Test
  void jdk_and_model_exceptions_thrown_remotely_are_caught_by_their_own_type() throws Exception {
    // setup
    Ledger a = account("ann");
    inClient(() -> ((DataClayObject) a).makePersistent());
    List<Class<? extends RuntimeException>> types = List.of(IllegalStateException.class,
        IllegalArgumentException.class, ArithmeticException.class, UnsupportedOperationException.class,
        java.util.NoSuchElementException.class, Overdrawn.class);
    for (Class<? extends RuntimeException> type : types) {
      // run
      RuntimeException e = assertThrows(type,
          () -> inClient(() -> a.fail(type.getSimpleName(), "insufficient funds: 55")));
      // verify: the model's type and message, the remote failure as the cause
      assertEquals(type, e.getClass());
      assertEquals("insufficient funds: 55", e.getMessage());
      assertTrue(e.getCause() instanceof RemoteException, type + " has cause " + e.getCause());
    }
  }

  @Test
  void a_model_exception_without_a_string_constructor_stays_a_remote_exception_naming_its_type() throws Exception {
    // setup
    Ledger a = account("ann");
    inClient(() -> ((DataClayObject) a).makePersistent());
    // run
    RemoteException e = assertThrows(RemoteException.class, () -> inClient(() -> a.fail("Frozen", "1700000000")));
    // verify
    assertEquals(Frozen.class.getName(), e.remoteType());
    assertEquals("frozen since 1700000000", e.remoteMessage());
  }

  @Test
  void duplicate_and_missing_aliases_fail_with_their_errors_and_delete_alias_frees_the_name() throws Exception {
    // setup
    Ledger a = account("ann");
    Ledger b = account("bob");
    inClient(() -> ((DataClayObject) a).makePersistent("taken"));
    // run
    AliasAlreadyExistsException dup = assertThrows(AliasAlreadyExistsException.class,
        () -> inClient(() -> ((DataClayObject) b).makePersistent("taken")));
    AliasDoesNotExistException missing = assertThrows(AliasDoesNotExistException.class,
        () -> as(client, () -> DataClayObject.getByAlias(accountClass, "nobody")));
    inClient(() -> {
      DataClayObject.deleteAlias("taken");
      ((DataClayObject) b).makePersistent("taken");
    });
    // verify
    assertTrue(dup.getMessage().contains("taken"), dup.getMessage());
    assertTrue(missing.getMessage().contains("nobody"), missing.getMessage());
    assertNotNull(((DataClayObject) b).getObjectId());
    assertEquals("bob", as(client, () -> ((Ledger) DataClayObject.getByAlias(accountClass, "taken")).getOwner()));
  }

  @Test
  void an_object_made_by_a_remote_method_comes_back_as_a_proxy_of_a_stored_object() throws Exception {
    // setup
    Ledger a = account("ann");
    inClient(() -> ((DataClayObject) a).makePersistent());
    // run
    Ledger backup = as(client, () -> a.linkBackup("spare"));
    long deposited = as(client, () -> backup.deposit(7));
    Ledger again = as(client, a::getBackup);
    // verify
    UUID id = ((DataClayObject) backup).getObjectId();
    assertNotNull(id);
    assertNotEquals(((DataClayObject) a).getObjectId(), id);
    assertEquals(7, deposited);
    assertEquals(id, ((DataClayObject) again).getObjectId());
    assertEquals(7, as(client, again::getBalance));
    assertTrue(cluster.store().header(id).isPresent());
  }

  @Test
  void a_volatile_model_object_passed_as_an_argument_is_stored_first_and_linked_by_reference() throws Exception {
    // setup
    Ledger a = account("ann");
    Ledger spare = account("spare");
    spare.deposit(3);
    inClient(() -> ((DataClayObject) a).makePersistent());
    // run
    inClient(() -> a.adopt(spare));
    Ledger linked = as(client, a::getBackup);
    // verify
    UUID id = ((DataClayObject) spare).getObjectId();
    assertNotNull(id);
    assertEquals(id, ((DataClayObject) linked).getObjectId());
    assertEquals(3, as(client, linked::getBalance));
    assertEquals(3, as(client, spare::getBalance));
  }

  @Test
  void get_backends_lists_the_backend_with_both_languages() {
    // run
    var backends = as(client, client::getBackends);
    // verify
    var b = backends.get(cluster.node().identity().id());
    assertNotNull(b);
    assertTrue(b.alive());
    assertTrue(b.languages().containsAll(List.of(Language.JAVA, Language.PYTHON)), b.languages().toString());
  }

  @Test
  void a_model_method_reads_the_field_of_another_persistent_object_as_stored() throws Exception {
    // setup: two persistent accounts; in the backend the argument arrives as a proxy
    Ledger a = account("ann");
    Ledger b = account("bob");
    as(client, () -> {
      ((DataClayObject) a).makePersistent();
      ((DataClayObject) b).makePersistent();
      a.deposit(5);
      return b.deposit(7);
    });
    // run
    long combined = as(client, () -> a.combinedBalance(b));
    // verify: b's stored balance, not a proxy's empty field
    assertEquals(12, combined);
  }

  @Test
  void model_code_on_the_client_reads_and_assigns_a_persistent_objects_fields_in_its_backend() throws Exception {
    // setup
    Ledger a = account("ann");
    Ledger volatileOne = account("vic");
    volatileOne.deposit(4);
    as(client, () -> {
      ((DataClayObject) a).makePersistent();
      return a.deposit(9);
    });
    var balanceOf = accountClass.getMethod("balanceOf", accountClass);
    var setBalanceOf = accountClass.getMethod("setBalanceOf", accountClass, long.class);
    // run: static model methods run here, on the client, where a is a proxy
    long read = as(client, () -> invoke(balanceOf, a));
    as(client, () -> invoke(setBalanceOf, a, 42L));
    long local = as(client, () -> invoke(balanceOf, volatileOne));
    // verify
    assertEquals(9, read);
    assertEquals(42, as(client, a::getBalance));
    assertEquals(4, local);
    assertEquals(42L, as(client, () -> Runtimes.current().getField((DataClayObject) a, "balance")));
  }

  @SuppressWarnings("unchecked")
  private static <T> T invoke(java.lang.reflect.Method method, Object... args) {
    try {
      return (T) method.invoke(null, args);
    } catch (java.lang.reflect.InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new AssertionError(e.getCause());
    } catch (IllegalAccessException e) {
      throw new AssertionError(e);
    }
  }
}
