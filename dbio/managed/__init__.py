"""What every engine's managed local instance shares: where instances live, one command at a time
on each (lock), the unprivileged server user, and claiming and checking its directory."""
