-- 0006_cjk_search, as the SQLite store's 0012: search finds Chinese,
-- Japanese and Korean words inside longer runs of those scripts, which
-- have no spaces between words (the SQLite store's cjk.go says how and
-- why). The index's words are the SQLite store's:
--
--   - every CJK character (Han, kana, Hangul; the class below is the
--     SQLite store's IsCJK) is a word of its own, and a query's CJK text
--     becomes the phrase of its characters, so 解析器 is found in
--     请修复解析器的错误;
--   - full-width letters and digits are their ASCII forms;
--   - CJK and full-width punctuation (，。「」、・ and the ideographic space)
--     separates words, as ASCII punctuation does: in this database's C
--     locale the text search parser takes any other non-ASCII character
--     as a letter.
--
-- mx_claw_search_words is made again with those rules; messages whose
-- words change (those with CJK or full-width characters) are written
-- again, in place, so that their stored search column is computed anew.

-- mx_claw_search_cjk sets every CJK character of t apart with U+001F
-- (which the parser takes as a separator and the text does not hold),
-- for ts_headline: snippets are cut from the message's own text, and
-- the U+001F taken out again.
CREATE FUNCTION mx_claw_search_cjk(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(t, '([\u1100-\u11FF\u3005-\u3007\u3041-\u3096\u309D-\u309F\u30A1-\u30FA\u30FC-\u30FF\u3131-\u318E\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uAC00-\uD7A3\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U000323AF])', E'\x1f\\1\x1f', 'g')
$$;

CREATE OR REPLACE FUNCTION mx_claw_search_words(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(regexp_replace(
        CASE WHEN t ~ '[\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A]'
            THEN translate(t, '０１２３４５６７８９ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ', '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz')
            ELSE t END,
        '[!-/:-@[-`{-~\u3000-\u3004\u3008-\u3040\u30A0\u30FB\uFF01-\uFF0F\uFF1A-\uFF20\uFF3B-\uFF40\uFF5B-\uFF65]+', ' ', 'g'),
        '([\u1100-\u11FF\u3005-\u3007\u3041-\u3096\u309D-\u309F\u30A1-\u30FA\u30FC-\u30FF\u3131-\u318E\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uAC00-\uD7A3\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U000323AF])', ' \1 ', 'g')
$$;

-- Any message with a character beyond ASCII, or a \u escape in its JSON.
UPDATE messages SET content = content
WHERE role <> 'system' AND content ~ '[^\x01-\x7F]|\\u';
