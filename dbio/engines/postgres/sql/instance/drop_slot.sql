-- A standby's replication slot, made by dbio with the standby, dropped when the standby is made again
SELECT pg_drop_replication_slot(slot_name)
  FROM pg_replication_slots
 WHERE slot_name = %(slot)s AND NOT active
