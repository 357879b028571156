"""Metrics as pure array functions of forecasts and outcomes: no game, no referee.

- :mod:`arena.metrics.calibration`: bias, Brier score, log loss, binned ECE, grid calibration;
- :mod:`arena.metrics.smce`: the exact smooth calibration error (§8);
- :mod:`arena.metrics.regret`: regret to constant and to linear forecasts (§6).

Each game (:mod:`arena.games`) scores a run with them and lists the metrics it writes in
:data:`arena.games.METRICS`.
"""
