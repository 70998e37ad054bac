// SecretStore: see docs/architecture.md
