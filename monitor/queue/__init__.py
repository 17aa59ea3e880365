"""The review queue: sampling with known inclusion probabilities, daily admission, claims and listings."""
