"""The look of the HTML report: one inline stylesheet, the filter script, and small markup helpers.

Everything is inline so a report is one directory that opens from disk, from a CI artifact or an
air-gapped machine: no fonts, scripts or images from the network. Colours follow
Autobahn|Testsuite's matrix (green pass, red fail, yellow non-strict) so the page reads at a
glance; every coloured cell also carries its verdict as text, for print and colour blindness.
"""

from __future__ import annotations

import html

from kconform.reports.common import VERDICT_SHORT, printable
from kconform.reports.model import ALTERNATIVES, baseline_verdicts

CSS = """
:root{--fg:#1d2329;--muted:#5f6b76;--line:#d8dde3;--bg:#fff;--head:#f3f5f7;
--pass:#3a9e4f;--fail:#d3343a;--error:#7b1e63;--non-strict:#f0c02f;--informational:#5a8bd6;
--unsupported:#b7b9c8;--not-applicable:#cfd3dc;--skipped:#e3e4e6}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:var(--fg);background:var(--bg)}
main{padding:14px 22px 40px;max-width:1900px}
h1{font-size:21px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 8px}
h3{font-size:14px;margin:16px 0 6px}h1 code{font-size:inherit}
section.subject>details>summary{font-size:14px;font-weight:600;color:var(--fg);margin:16px 0 6px}
a{color:#1459a8}code,.mono,pre{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;
font-size:12.5px}
pre{margin:0;white-space:pre-wrap;word-break:break-all}
.muted{color:var(--muted)}.small{font-size:12px}
table{border-collapse:collapse}
th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}
thead th{background:var(--head);font-weight:600}
.banner{padding:10px 14px;border-radius:5px;margin:10px 0;font-weight:600}
.banner.warn{background:#fff3cd;border:1px solid #e0b000}
.banner.pass{background:#e7f5ec;border:1px solid var(--pass)}
.banner.fail{background:#fdecec;border:1px solid var(--fail)}
.banner.notrun{background:#eef1f4;border:1px solid #8a949e}
.banner .why{font-weight:400;margin-left:8px}
.counts td.n .exp{color:var(--muted);font-weight:400;font-size:11px;white-space:nowrap}
.status{display:inline-block;padding:5px 14px;border-radius:5px;font-weight:700;color:#fff;
margin-right:12px}
.status.ok{background:var(--pass)}.status.bad{background:var(--fail)}
.runmeta{display:flex;flex-wrap:wrap;gap:4px 22px;align-items:center;margin:6px 0 10px}
.runmeta b{font-weight:600}
.v-pass{background:var(--pass);color:#fff}.v-fail{background:var(--fail);color:#fff}
.v-error{background:var(--error);color:#fff}.v-non-strict{background:var(--non-strict);color:#222}
.v-informational{background:var(--informational);color:#fff}
.v-unsupported{background:var(--unsupported);color:#222}
.v-not-applicable{background:var(--not-applicable);color:#222}
.v-skipped{background:repeating-linear-gradient(135deg,#e9eaec 0 6px,#d9dadd 6px 12px);color:#333}
.v-none{background:#fff;color:#aab}
.v-exp,.matrix td.v.exp{color:#7a4a4a;font-weight:400;
background:repeating-linear-gradient(135deg,#f4f0f0 0 6px,#e9e3e3 6px 12px)}
.chip{display:inline-block;min-width:64px;padding:1px 7px;border-radius:3px;text-align:center;
font-size:12px;font-weight:600;white-space:nowrap}
.lvl{display:inline-block;padding:0 5px;border-radius:3px;font-size:11px;font-weight:700;
letter-spacing:.03em;border:1px solid #39424c}
.lvl-MUST{background:#39424c;color:#fff}.lvl-SHOULD{background:#fff;color:#39424c}
.lvl-INFO{background:#fff;color:#8a949e;border-color:#b9c0c7}
.caps{display:flex;flex-wrap:wrap;gap:3px;margin-top:2px}
.counts td.impl>div{min-width:260px;max-width:520px}.counts td.impl .mono{color:var(--muted)}
.counts th .chip{min-width:0}
.cap{background:#eef1f4;border-radius:3px;padding:0 5px;font-size:11.5px;color:#3b4650}
.counts td.n{text-align:right;font-variant-numeric:tabular-nums;min-width:44px}
.counts td.z{color:#c2c8ce}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;margin:6px 0 4px;font-size:12.5px}
.legend span.chip{min-width:58px}
.legend .item{display:flex;gap:5px;align-items:center}
.chgdemo{display:inline-block;position:relative;width:30px;height:18px;background:var(--pass);
border-radius:3px}.chgdemo::after{content:"";position:absolute;top:2px;right:2px;
border-left:9px solid transparent;border-top:9px solid #111}
#filters{display:flex;flex-wrap:wrap;gap:6px 18px;align-items:center;margin:8px 0;padding:7px 10px;
background:var(--head);border:1px solid var(--line);border-radius:5px;font-size:12.5px}
#filters fieldset{border:0;margin:0;padding:0;display:flex;gap:4px 9px;flex-wrap:wrap;
align-items:center}
#filters legend{float:left;font-weight:600;margin-right:4px;padding:0}
#filters label{white-space:nowrap;cursor:pointer}
#filters input[type=search]{font:inherit;padding:2px 6px;width:190px}
#filters button{font:inherit;font-size:12px;padding:1px 8px;cursor:pointer}
.matrix{font-size:13px}
.matrix thead th{text-align:center;vertical-align:bottom}
.matrix thead tr.names th{position:sticky;top:0;z-index:2}
.matrix th.case{position:sticky;left:0;background:#fff;z-index:1;font-weight:400;
max-width:460px;min-width:300px}
.matrix thead th.case{z-index:3;background:var(--head);text-align:left}
.matrix th.case a{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;
font-size:12.5px;text-decoration:none}
.matrix th.case .t{color:var(--muted);font-size:12px;white-space:nowrap;overflow:hidden;
text-overflow:ellipsis}
.matrix td.level{text-align:center;vertical-align:middle}
.matrix td.v{text-align:center;vertical-align:middle;padding:0;min-width:96px;font-size:12px;
font-weight:600;position:relative}
.matrix td.v a{display:block;padding:6px 6px;color:inherit;text-decoration:none}
.matrix td.v a:hover{outline:2px solid #111;outline-offset:-2px}
.matrix td.v.chg::after{content:"";position:absolute;top:2px;right:2px;width:0;height:0;
border-left:9px solid transparent;border-top:9px solid #111}
.matrix td.v.dim{opacity:.14}
.matrix tr.kip th{background:#e6eaee;text-align:left;font-size:13px;padding:5px 8px;
position:sticky;left:0}
.matrix th.subj{min-width:96px;max-width:150px;word-break:break-word;font-size:12px}
.matrix th.subj .impl{display:block;font-weight:400;color:var(--muted);font-size:11px}
.changes td{vertical-align:middle}
.arrow{font-size:15px;padding:0 4px;color:var(--muted)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;margin:6px 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
section.subject{border:1px solid var(--line);border-left-width:7px;border-radius:4px;
padding:4px 16px 14px;margin:16px 0}
section.subject h2{display:flex;gap:10px;align-items:center;margin-top:10px}
.b-pass{border-left-color:var(--pass)}.b-fail{border-left-color:var(--fail)}
.b-error{border-left-color:var(--error)}.b-non-strict{border-left-color:var(--non-strict)}
.b-informational{border-left-color:var(--informational)}
.b-unsupported{border-left-color:var(--unsupported)}
.b-not-applicable{border-left-color:var(--not-applicable)}.b-skipped{border-left-color:#c9cacd}
.message{background:#fbf6e3;border:1px solid #eadca5;border-radius:4px;padding:6px 9px;
margin:6px 0}
table.expect td.ok{color:var(--pass);font-weight:700;text-align:center}
table.expect td.bad{color:#fff;background:var(--fail);font-weight:700;text-align:center}
table.expect tr.bad td{background:#fdecec}table.expect tr.bad td.bad{background:var(--fail)}
table.expect td pre{max-height:16em;overflow:auto}
table.wire{font-size:12.5px;width:100%}
table.wire td.nw{white-space:nowrap}
table.wire td.t{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
table.wire td.dir{text-align:center;font-size:15px;font-weight:700}
.d-req{color:#1459a8}.d-resp{color:#2a7d3a}.d-proxy{color:#8a3ab0}
table.wire .note{color:#8a3ab0;font-style:italic}
details summary{cursor:pointer;color:var(--muted);font-size:12px}
details pre.hex{background:#f6f8fa;padding:6px 8px;border-radius:4px;margin-top:3px;
white-space:pre;overflow-x:auto;word-break:normal}
.nav{display:flex;gap:6px;flex-wrap:wrap;margin:8px 0}
.nav a{text-decoration:none}
.back{display:inline-block;margin-bottom:8px}
@media print{#filters{display:none}.matrix thead th,.matrix th.case{position:static}}
"""

# Progressive enhancement: without JS every row shows and the filter bar stays hidden.
FILTER_JS = """
(function(){
var form=document.getElementById('filters');if(!form)return;form.hidden=false;
var rows=[].slice.call(document.querySelectorAll('tr.case'));
var groups=[].slice.call(document.querySelectorAll('tbody.kipgroup'));
var shown=document.getElementById('shown');
function boxes(name){return [].slice.call(form.querySelectorAll('input[name='+name+']'));}
function checked(name){var s={};boxes(name).forEach(function(i){if(i.checked)s[i.value]=1;});
return s;}
function apply(){
var vs=checked('verdict'),ks=checked('kip'),q=form.q.value.trim().toLowerCase(),
onlyChg=form.changed.checked,n=0;
groups.forEach(function(g){g.hidden=!ks[g.getAttribute('data-kip')];});
rows.forEach(function(r){
var any=false,chg=false;
[].forEach.call(r.querySelectorAll('td.v'),function(c){
var on=!!vs[c.getAttribute('data-v')];c.classList.toggle('dim',!on);any=any||on;
chg=chg||c.classList.contains('chg');});
var hit=!q||r.textContent.toLowerCase().indexOf(q)>=0;
r.hidden=!(any&&hit&&(!onlyChg||chg));
if(!r.hidden&&!r.parentNode.hidden)n++;});
if(shown)shown.textContent=n;}
/* the filter state lives in the URL (#f:verdict=fail,error;kip=kip-714;q=push) to share views */
function save(){var parts=[];['verdict','kip'].forEach(function(name){var all=boxes(name),
on=all.filter(function(i){return i.checked;});if(on.length<all.length)parts.push(name+'='+
on.map(function(i){return i.value;}).join(','));});if(form.changed.checked)parts.push('changed=1');
if(form.q.value)parts.push('q='+encodeURIComponent(form.q.value));
history.replaceState(null,'',parts.length?'#f:'+parts.join(';'):location.pathname);}
function load(){var h=location.hash;if(h.indexOf('#f:')!==0)return;
h.slice(3).split(';').forEach(function(kv){var i=kv.indexOf('='),k=kv.slice(0,i),
v=decodeURIComponent(kv.slice(i+1));if(k==='verdict'||k==='kip'){var want=v.split(',');
boxes(k).forEach(function(b){b.checked=want.indexOf(b.value)>=0;});}
else if(k==='changed')form.changed.checked=v==='1';else if(k==='q')form.q.value=v;});}
function setAll(name,only){boxes(name).forEach(function(i){
i.checked=only===null||only.indexOf(i.value)>=0;});apply();save();}
form.addEventListener('change',function(){apply();save();});
form.q.addEventListener('input',function(){apply();save();});
form.addEventListener('submit',function(e){e.preventDefault();});
[].forEach.call(form.querySelectorAll('button[data-set]'),function(b){
b.addEventListener('click',function(){var a=b.getAttribute('data-set').split(':');
setAll(a[0],a[1]==='all'?null:a[1]==='none'?[]:a[1].split(','));});});
load();apply();document.documentElement.classList.add('js');
})();
"""


def esc(value: object) -> str:
    """HTML-escape anything shown (quotes too: values land in attributes)."""
    return html.escape(printable(value), quote=True)


def chip(verdict: str | None, text: str | None = None) -> str:
    """A coloured verdict label; `None` is "not run"; a baseline entry with alternatives
    ('not-applicable|pass') one label each."""
    if verdict is None:
        return '<span class="chip v-none">not run</span>'
    if text is None and ALTERNATIVES in verdict:
        return " or ".join(chip(v) for v in baseline_verdicts(verdict))
    label = text if text is not None else VERDICT_SHORT.get(verdict, verdict)
    return f'<span class="chip v-{esc(verdict)}">{esc(label)}</span>'


def level_badge(level: str) -> str:
    return f'<span class="lvl lvl-{esc(level)}">{esc(level)}</span>'


def page(title: str, body: str, *, script: str = "") -> str:
    """A whole document: inline CSS, optional inline script at the end, no external reference."""
    tail = f"<script>{script}</script>" if script else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{body}</main>{tail}</body></html>\n"
    )


def verdict_banner(state: str, headline: str, why: str = "", *, id: str = "verdict") -> str:
    """The first line of a page: `state` pass, fail or notrun, a headline (`SOAK PASSED`) and
    why, so the page's answer is on its first screen whatever follows."""
    detail = f'<span class="why">{esc(why)}</span>' if why else ""
    return f'<div class="banner {esc(state)}" id="{esc(id)}">{esc(headline)}{detail}</div>'
