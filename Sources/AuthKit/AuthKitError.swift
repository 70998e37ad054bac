// AuthKit: see docs/architecture.md
