-- The roles and the database coffer-server expects (docs/FORMAT.md §8.5), for psql as a superuser connected to any
-- database of the cluster. Every statement is guarded, so it can run again on a cluster that has them.
--
--   coffer_owner        owns the database and the tables; runs the migrations (`--admin-database-url`)
--   coffer_app          serves requests: owns nothing, no BYPASSRLS, so row-level security applies to it
--   coffer_maintenance  the work that spans users: purge, the whole audit log (`--maintenance-database-url`)
--
-- Passwords are not set here (scripts/postgres.sh trusts loopback; contrib/ha/post-bootstrap.sh sets them from files).
\set ON_ERROR_STOP on
SELECT 'CREATE ROLE coffer_owner LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE'
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'coffer_owner') \gexec
SELECT 'CREATE ROLE coffer_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT'
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'coffer_app') \gexec
SELECT 'CREATE ROLE coffer_maintenance LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT'
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'coffer_maintenance') \gexec
SELECT 'CREATE DATABASE coffer OWNER coffer_owner ENCODING ''UTF8'' TEMPLATE template0'
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'coffer') \gexec
REVOKE ALL ON DATABASE coffer FROM PUBLIC;
GRANT CONNECT ON DATABASE coffer TO coffer_app;
GRANT CONNECT ON DATABASE coffer TO coffer_maintenance;
\connect coffer
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO coffer_owner;
GRANT USAGE ON SCHEMA public TO coffer_app;
GRANT USAGE ON SCHEMA public TO coffer_maintenance;
