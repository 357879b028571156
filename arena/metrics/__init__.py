"""Referee metrics: calibration, regret, smooth calibration error."""
