#!/bin/sh
# Lets the `replica` profile's standby copy and follow this server (pg_basebackup, streaming).
# Runs once, when the data volume is first initialised (docker-entrypoint-initdb.d).
echo "host replication all all trust" >> "$PGDATA/pg_hba.conf"
