/** Notification text reaches a shared channel: a tenant's text in it mentions no one, links nowhere, and carries no control characters. */
import { describe, expect, it } from 'vitest';
import { EventReason } from '../../../src/api/keys.ts';
import { notificationOf, slackInert } from '../../../src/workers/notify/notification.ts';
import { makeApp } from '../app/fixtures.ts';

describe('Slack text', () => {
  it('escapes what Slack parses and breaks plain mentions', () => {
    expect(slackInert('<!channel> <!here|x> <@U024BE7LH> <https://evil.example|docs> a & b')).toBe(
      '&lt;!channel&gt; &lt;!here|x&gt; &lt;＠U024BE7LH&gt; &lt;https://evil.example|docs&gt; a &amp; b',
    );
    expect(slackInert('@here @channel @everyone')).toBe('＠here ＠channel ＠everyone');
  });

  it('replaces control and bidi characters', () => {
    expect(slackInert('a\u001b[31mred\u0007\nb\u202egnp.exe\u2066c\u0085')).toBe('a [31mred  b gnp.exe c ');
  });

  it('a notification carries the tenant text inert, with link previews off', () => {
    const app = { ...makeApp('web'), status: { updateRevision: 'web-2' } };
    const message = "canary step 2 analysis errors failed: $.msg == '<!channel> see <https://evil.example|the runbook>'\u001b[2J";
    const n = notificationOf(app, { type: 'Warning', reason: EventReason.rolloutAborted, action: 'Abort', message }, new Date());
    expect(n?.body.text).not.toMatch(/[<>@]/);
    expect(n?.body.text.includes('\u001b')).toBe(false);
    expect(n?.body.text).toContain('&lt;!channel&gt;');
    expect(n?.body).toMatchObject({ unfurl_links: false, unfurl_media: false });
    expect(n?.body.ebb.message).toBe(message.replace('\u001b', ' '));
  });
});
