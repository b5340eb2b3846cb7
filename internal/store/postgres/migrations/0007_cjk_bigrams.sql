-- 0007_cjk_bigrams, as the SQLite store's 0013: a CJK word of two or more
-- characters is looked up by its pairs of characters, far rarer than its
-- characters (the SQLite store's cjk.go says how and why). After a
-- message's words, its tsvector holds, for each run of two or more CJK
-- characters, the word U+E010 and the run's overlapping pairs of
-- characters: 解析器 adds "解析 析器".
--
-- mx_claw_search_query_words is 0006's mx_claw_search_words, the words of
-- a query's text (and of the message before its pairs);
-- mx_claw_search_words, which the stored search column calls, adds the
-- pairs; messages with CJK text (or \u escapes in their JSON) are written
-- again, in place, so that their search column is computed anew.

CREATE FUNCTION mx_claw_search_query_words(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(regexp_replace(
        CASE WHEN t ~ '[\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A]'
            THEN translate(t, '０１２３４５６７８９ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ', '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz')
            ELSE t END,
        '[!-/:-@[-`{-~\u3000-\u3004\u3008-\u3040\u30A0\u30FB\uFF01-\uFF0F\uFF1A-\uFF20\uFF3B-\uFF40\uFF5B-\uFF65]+', ' ', 'g'),
        '([\u1100-\u11FF\u3005-\u3007\u3041-\u3096\u309D-\u309F\u30A1-\u30FA\u30FC-\u30FF\u3131-\u318E\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uAC00-\uD7A3\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U000323AF])', ' \1 ', 'g')
$$;

-- mx_claw_search_bigrams is U+E010 and the overlapping pairs of
-- characters of each run of two or more CJK characters of t.
CREATE FUNCTION mx_claw_search_bigrams(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(' ' || chr(57360) || ' ' || (
            SELECT string_agg(substr(r.m[1], i, 2), ' ' ORDER BY i)
            FROM generate_series(1, length(r.m[1]) - 1) AS i),
        '' ORDER BY r.o), '')
    FROM regexp_matches(t, '[\u1100-\u11FF\u3005-\u3007\u3041-\u3096\u309D-\u309F\u30A1-\u30FA\u30FC-\u30FF\u3131-\u318E\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uAC00-\uD7A3\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U000323AF]{2,}', 'g') WITH ORDINALITY AS r(m, o)
$$;

CREATE OR REPLACE FUNCTION mx_claw_search_words(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT mx_claw_search_query_words(t) || mx_claw_search_bigrams(t)
$$;

CREATE OR REPLACE FUNCTION mx_claw_search_term(term text, prefix boolean) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN prefix AND numnode(q) > 0 THEN (q::text || ':*')::tsquery ELSE q END
    FROM phraseto_tsquery('mx_claw_search', mx_claw_search_query_words(term)) AS q
$$;

UPDATE messages SET content = content
WHERE role <> 'system' AND content ~ '[\u1100-\u11FF\u3005-\u3007\u3041-\u3096\u309D-\u309F\u30A1-\u30FA\u30FC-\u30FF\u3131-\u318E\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uAC00-\uD7A3\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U000323AF]|\\u';
