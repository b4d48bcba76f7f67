package io.dataclay.logic.metadata;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool.PoolInitializationException;
import io.dataclay.exceptions.DataClayException;
import java.util.concurrent.TimeUnit;

/**
 * The Logic Module's metadata database: one schema and one code path for the embedded SQLite
 * database and for PostgreSQL, chosen by the JDBC URL. Every write is durable when it returns
 * (on SQLite within the promise of its {@link MetadataSync}).
 */
public final class MetadataStore implements AutoCloseable {
  private final String url;
  private final SqlDialect dialect;
  private final MetadataSync sync;
  private final HikariDataSource pool;
  private final Jdbc jdbc;
  private final AccountStore accounts;
  private final SessionStore sessions;
  private final ModelStore models;
  private final BackendStore backends;
  private final ObjectMetadataStore objects;
  private final ImportTables imports;
  private final FailoverStore failover;
  private final ListingStore listings;

  private MetadataStore(String url, SqlDialect dialect, MetadataSync sync, HikariDataSource pool, Jdbc jdbc) {
    this.url = url;
    this.dialect = dialect;
    this.sync = sync;
    this.pool = pool;
    this.jdbc = jdbc;
    this.accounts = new AccountStore(jdbc);
    this.sessions = new SessionStore(jdbc);
    this.models = new ModelStore(jdbc);
    this.backends = new BackendStore(jdbc);
    this.objects = new ObjectMetadataStore(jdbc);
    this.imports = new ImportTables(jdbc);
    this.failover = new FailoverStore(jdbc);
    this.listings = new ListingStore(jdbc);
  }

  /**
   * Connects to the database at {@code url} (creating the SQLite file and its directory when
   * missing) and creates the schema if needed.
   *
   * @throws MetadataUnavailableException when the database cannot be opened or its schema is unusable
   */
  public static MetadataStore open(String url, MetadataSync sync) {
    SqlDialect dialect;
    try {
      dialect = SqlDialect.of(url);
    } catch (IllegalArgumentException e) {
      throw new MetadataUnavailableException(e.getMessage(), e);
    }
    HikariConfig config = new HikariConfig();
    config.setPoolName("lm-metadata");
    config.setDataSource(new DialectConnections(dialect, url, sync));
    // SQLite: one connection, so writers take turns on it (SQLite serialises them anyway)
    config.setMaximumPoolSize(dialect.poolSize());
    config.setMinimumIdle(1);
    config.setAutoCommit(false);
    config.setConnectionTimeout(TimeUnit.SECONDS.toMillis(30));
    HikariDataSource pool;
    try {
      // opens one connection now, so a wrong URL or an unreachable server fails here, clearly
      pool = new HikariDataSource(config);
    } catch (PoolInitializationException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new MetadataUnavailableException("cannot open the metadata database " + SqlDialect.redact(url) + ": "
          + cause.getMessage(), cause);
    }
    try {
      Jdbc jdbc = new Jdbc(pool, dialect);
      Schema.create(jdbc);
      SnapshotSchema.create(jdbc);
      return new MetadataStore(url, dialect, sync, pool, jdbc);
    } catch (DataClayException e) {
      pool.close();
      throw new MetadataUnavailableException("cannot open the metadata database " + SqlDialect.redact(url) + ": "
          + e.getMessage(), e);
    }
  }

  /** The JDBC URL without its query string (which may hold a password), for messages. */
  public String describe() {
    return SqlDialect.redact(url);
  }

  /** Accounts, datasets and data contracts. */
  public AccountStore accounts() {
    return accounts;
  }

  /** Sessions by token hash. */
  public SessionStore sessions() {
    return sessions;
  }

  /** Registered models. */
  public ModelStore models() {
    return models;
  }

  /** Registered backends. */
  public BackendStore backends() {
    return backends;
  }

  /** Object metadata and aliases. */
  public ObjectMetadataStore objects() {
    return objects;
  }

  /** What open imports staged, and which imports committed. */
  public ImportTables imports() {
    return imports;
  }

  /**
   * A consistent read-only view of the metadata as of now, on a connection of its own (a
   * snapshot's cut); the caller closes it.
   */
  public MetadataCut openCut() {
    return MetadataCut.open(dialect, url, sync);
  }

  /** Pages of datasets, aliases and objects (access is the caller's to check). */
  public ListingStore listings() {
    return listings;
  }

  /** Backend terms, promotions and demotions. */
  public FailoverStore failover() {
    return failover;
  }

  /** Closes every connection; later calls fail with an internal error. */
  @Override
  public void close() {
    pool.close();
    jdbc.close();
  }
}
