"""Alerts: the pure spike policy, the alert history store, and delivery."""
