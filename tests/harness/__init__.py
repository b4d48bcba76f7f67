"""Real servers for the integration tests: PostgreSQL and local dataClay clusters."""
