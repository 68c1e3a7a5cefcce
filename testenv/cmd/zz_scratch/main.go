package main

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/extproc"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/testenv/sessions"
)

func main() {
	ss, _ := sessions.Load("/work/shared/sessions/sessions.jsonl")
	cfg := extproc.DefaultConfig()
	var head, asstText, inputsOld, inputsRecent, resOld, resRecent, structOld, structRecent, thinking, userText, total int
	for _, s := range ss {
		w := sessions.OwnWindow(s, wire.Anthropic, 3)
		p := *cfg.Profiles[extproc.DefaultProfile]
		p.Tiers.WindowTokens = w
		c := *cfg
		c.Profiles = map[string]*extproc.Profile{extproc.DefaultProfile: &p}
		rw, _ := extproc.NewRewriter(&c, "")
		// find the first rewritten request over the window
		var over []byte
		for _, raw := range s.Anthropic {
			r, err := rw.Rewrite("/v1/messages", raw)
			if err != nil {
				continue
			}
			oc, _ := wire.Parse(wire.Anthropic, r.Body)
			if history.Estimate(oc) > w*4 {
				over = r.Body
				break
			}
		}
		rw.Close()
		if over == nil {
			continue
		}
		total += len(over)
		root := gjson.ParseBytes(over)
		head += len(root.Get("system").Raw) + len(root.Get("tools").Raw) + len(root.Get("messages.0").Raw)
		msgs := root.Get("messages").Array()
		// recent = messages holding the last 6 results and their calls
		resultsSeen := 0
		recentFrom := len(msgs)
		for i := len(msgs) - 1; i >= 1; i-- {
			n := 0
			msgs[i].Get("content").ForEach(func(_, b gjson.Result) bool {
				if b.Get("type").String() == "tool_result" {
					n++
				}
				return true
			})
			resultsSeen += n
			recentFrom = i
			if resultsSeen >= 6 {
				recentFrom = i - 1
				break
			}
		}
		for i, m := range msgs[1:] {
			i++
			recent := i >= recentFrom
			if !m.Get("content").IsArray() {
				userText += len(m.Raw)
				continue
			}
			m.Get("content").ForEach(func(_, b gjson.Result) bool {
				switch b.Get("type").String() {
				case "text":
					if m.Get("role").String() == "assistant" {
						asstText += len(b.Raw)
					} else {
						userText += len(b.Raw)
					}
				case "thinking", "redacted_thinking":
					thinking += len(b.Raw)
				case "tool_use":
					in := len(b.Get("input").Raw)
					if recent {
						inputsRecent += in
						structRecent += len(b.Raw) - in
					} else {
						inputsOld += in
						structOld += len(b.Raw) - in
					}
				case "tool_result":
					tx := 0
					c := b.Get("content")
					if c.Type == gjson.String {
						tx = len(c.Raw)
					} else {
						c.ForEach(func(_, x gjson.Result) bool { tx += len(x.Get("text").Raw); return true })
					}
					if recent {
						resRecent += tx
						structRecent += len(b.Raw) - tx
					} else {
						resOld += tx
						structOld += len(b.Raw) - tx
					}
				}
				return true
			})
		}
	}
	_ = strings.Join
	fmt.Printf("total %d head %d userText %d asstText %d thinking %d | old: inputs %d results %d struct %d | recent: inputs %d results %d struct %d\n",
		total, head, userText, asstText, thinking, inputsOld, resOld, structOld, inputsRecent, resRecent, structRecent)
}
