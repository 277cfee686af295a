"""The work dbio's commands share, each verb composing it: a run measured (run.py), the data set loaded
(setup.py) and read back (dataset.py), the raw-device baseline beside a run (baseline.py), a maintenance
operation timed (ops.py), a result's files written (run_files.py). A module here imports no command."""
