"""The Env API: environments, wrappers' base classes, results and seeding."""
