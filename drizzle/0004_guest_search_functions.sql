-- Guest search (docs/guests.md): trigram matching over an unaccented, lower-case text.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS unaccent;--> statement-breakpoint
-- unaccent() is only STABLE (its dictionary could change); naming the dictionary makes the
-- result fixed, so this wrapper may be IMMUTABLE and used in a generated column and an index.
CREATE OR REPLACE FUNCTION immutable_unaccent(value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, value) $$;--> statement-breakpoint
-- The text a guest is searched by: name, e-mail, the digits of the E.164 phone and of its national form.
CREATE OR REPLACE FUNCTION guest_search_text(first_name text, last_name text, email text, phone text, phone_national text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT lower(immutable_unaccent(concat_ws(' ', first_name, last_name, email, regexp_replace(phone, '\D', '', 'g'), phone_national))) $$;
