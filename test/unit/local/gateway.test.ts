import { GATEWAY_RESPONSES } from '../../../functions/http/gateway-responses';
import { gatewayResponseStatus } from '../../../local/gateway';

describe('local gateway responses', () => {
  it("answer the gateway's own failures with 500 and refusals with 4xx", () => {
    expect(gatewayResponseStatus('DEFAULT_5XX')).toBe(500);
    expect(gatewayResponseStatus('DEFAULT_4XX')).toBe(400);
    for (const def of GATEWAY_RESPONSES) {
      const status = gatewayResponseStatus(def.type);
      expect(def.code === 'INTERNAL_SERVER_ERROR' ? status >= 500 : status < 500).toBe(true);
    }
  });
});
