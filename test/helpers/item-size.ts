/** An item's size as DynamoDB counts and bills it (write units are per KB of it): what the store measures. */
export { itemBytes as itemSize } from '../../shared/store/item-size';
