"""Utilities: check_env, action-mask helpers and structural comparison."""
