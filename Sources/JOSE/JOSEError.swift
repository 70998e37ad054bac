// JOSE: see docs/architecture.md
