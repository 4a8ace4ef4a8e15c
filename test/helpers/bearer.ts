/** The Authorization header that presents `token` (an API key or the admin token). */
export const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` });
